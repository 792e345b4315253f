// Where JavaScript runs: hovering a bar or point of a chart dims the other series, so that one
// line can be followed through a crowded chart. Without it, each point's <title> still shows.
document.querySelectorAll("svg.chart").forEach(function (chart) {
  var tips = chart.querySelectorAll(".tip");
  tips.forEach(function (tip) {
    tip.addEventListener("mouseenter", function () {
      var series = tip.getAttribute("data-series");
      chart.classList.add("dim");
      tips.forEach(function (t) { t.classList.toggle("on", t.getAttribute("data-series") === series); });
    });
    tip.addEventListener("mouseleave", function () { chart.classList.remove("dim"); });
  });
});

// A link to a line of a folded source (a stop of the lesson's walk, `file:line`) opens the fold
// first, so that the line is there to scroll to; elsewhere the browser's own scroll stands.
function unfoldTarget() {
  var target = location.hash.length > 1 ? document.getElementById(decodeURIComponent(location.hash.slice(1))) : null;
  var folded = false;
  for (var el = target ? target.parentElement : null; el; el = el.parentElement) {
    if (el.tagName === "DETAILS" && !el.open) { el.open = true; folded = true; }
  }
  if (folded) target.scrollIntoView({block: "center"});
}
window.addEventListener("hashchange", unfoldTarget);
document.addEventListener("click", function (event) {  // the same link again: no hashchange
  var link = event.target.closest ? event.target.closest('a[href^="#src-"]') : null;
  if (link) setTimeout(unfoldTarget, 0);
});
unfoldTarget();
