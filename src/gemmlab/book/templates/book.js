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
