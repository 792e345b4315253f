// ---- A tail split's plan: after host_runtime.cuh, where a launch splits on a line of blocks (bigtile's SPLIT 2) ----
namespace gemmlab_host {

// A tail split (cuda/handoff.py's tail_plan, the same rule; a test runs both): every tile in
// split_parts' parts, unless the tiles left over after whole waves, in more parts, model `margin`
// faster. Then the first *lead tiles have *lead_parts parts each (the least, or split_parts'), the
// rest *tail_parts, as many as make their wave shortest.
[[maybe_unused]] static void split_tail_plan(int tiles, int k_tiles, int slots, int min_k_tiles, int idle_min_k_tiles,
                                             int max_parts, int counters, double fixed, double level, double margin,
                                             int least, int* lead, int* lead_parts, int* tail_parts) {
    const int uniform = split_parts(tiles, k_tiles, slots, min_k_tiles, idle_min_k_tiles, max_parts, counters, fixed, level,
                                    margin, least);
    *lead = tiles, *lead_parts = uniform, *tail_parts = uniform;
    if (tiles < 1 || slots < 1) return;
    const double bar = split_time(tiles, k_tiles, slots, fixed, level, uniform) * (1 - margin);
    int limit = k_tiles / idle_min_k_tiles;
    if (limit > max_parts) limit = max_parts;
    if (limit < 1) limit = 1;
    const int low = least < 1 ? 1 : least > limit ? limit : least;
    const int choices[2] = {std::min(low, uniform), std::max(low, uniform)};
    bool found = false;
    double best = 0;
    for (int c = 0; c < (low == uniform ? 1 : 2); ++c) {
        const int lp = choices[c];
        const long long waves = (long long)tiles * lp / slots;
        const int first = (int)(waves * slots / lp);
        if (waves == 0 || first >= tiles) continue;
        for (int tp = low; tp <= limit; ++tp) {
            if ((long long)first * lp + (long long)(tiles - first) * tp > counters) break;
            const double time = (first ? split_time(first, k_tiles, slots, fixed, level, lp) : 0.0) +
                                split_time(tiles - first, k_tiles, slots, fixed, level, tp);
            if (time <= bar && (!found || time < best)) {
                found = true, best = time;
                *lead = first, *lead_parts = lp, *tail_parts = tp;
            }
        }
    }
}

}  // namespace gemmlab_host
