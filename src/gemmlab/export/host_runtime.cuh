// ---- host helpers: errors, the device's figures, the workspace, launches ----
namespace gemmlab_host {

// One line on stderr for a failed CUDA call; the harness sees C unwritten.
[[maybe_unused]] static bool ok(cudaError_t err, const char* what) {
    if (err == cudaSuccess) return true;
    std::fprintf(stderr, "gemmlab %s: %s: %s (%s)\n", RUNG, what, cudaGetErrorName(err),
                 cudaGetErrorString(err));
    return false;
}

[[maybe_unused]] static int ceil_div(int a, int b) { return (a + b - 1) / b; }
[[maybe_unused]] static size_t round_up(size_t bytes, size_t to) { return (bytes + to - 1) / to * to; }

[[maybe_unused]] static int device_attribute(cudaDeviceAttr attr) {
    int dev = 0, value = 0;
    cudaGetDevice(&dev);
    cudaDeviceGetAttribute(&value, attr, dev);
    return value;
}

// Compute capability as 10·major + minor (90 on Hopper), asked once.
[[maybe_unused]] static int compute_capability() {
    static const int cc = 10 * device_attribute(cudaDevAttrComputeCapabilityMajor) +
                          device_attribute(cudaDevAttrComputeCapabilityMinor);
    return cc;
}

// The features of the device code the driver loaded for this GPU (gemmlab::image_features,
// bits of cuda/needs.py: cp.async 1, TMA 2, wgmma 4), read once: a build's flags, not the GPU,
// decide what it holds (-arch=sm_80 on an H200 has no TMA). -1, said once on stderr, where
// the build has no code this GPU runs (-arch=sm_100a on an H200).
[[maybe_unused]] static int image_features() {
    static int features = -2;
    if (features == -2) {
        int value = 0;
        const cudaError_t err = cudaMemcpyFromSymbol(&value, gemmlab::image_features, sizeof value);
        if (err == cudaSuccess) {
            features = value;
        } else {
            std::fprintf(stderr, "gemmlab %s: this build holds no device code this GPU (sm_%d) runs: %s; "
                         "build it for this GPU (%s)\n", RUNG, compute_capability(), cudaGetErrorName(err),
                         BUILD_ADVICE);
            cudaGetLastError();  // not sticky: clear it, so the caller's next call sees its own errors
            features = -1;
        }
    }
    return features;
}

[[maybe_unused]] static bool image_has(int bit) { return image_features() >= 0 && (image_features() & bit) == bit; }

// Once per process, where the rung's own launches are not in this build for a call and the
// portable floor runs instead: the user sees why the file is slower than its rung.
[[maybe_unused]] static void floor_note() {
    static bool said = false;
    if (said) return;
    said = true;
    std::fprintf(stderr, "gemmlab %s: this build holds none of the rung's own launches for this call "
                 "(they need %s); running the portable fallback. %s\n", RUNG, OWN_NEEDS, BUILD_ADVICE);
}

[[maybe_unused]] static int sm_count() {
    static const int sms = device_attribute(cudaDevAttrMultiProcessorCount);
    return sms;
}

// Scratch for pre-pass outputs, kept between calls and grown on demand. A grown
// buffer replaces the old one without freeing it: work queued on the default
// stream may still read the old one, and cudaFree would stall the call.
[[maybe_unused]] static char* workspace(size_t bytes) {
    static char* buffer = nullptr;
    static size_t held = 0;
    if (bytes > held) {
        char* fresh = nullptr;
        if (!ok(cudaMalloc(&fresh, bytes), "cudaMalloc (workspace)")) return nullptr;
        buffer = fresh;
        held = bytes;
    }
    return buffer;
}

// Split-K parts per tile (cuda/handoff.py's parts(), the same rule; a test runs both over a
// grid of inputs): a grid of tiles × p blocks on `slots` resident blocks takes ceil(tiles·p /
// slots) waves of ceil(k_tiles / p) + fixed k-tiles each, plus `level` k-tiles per level of the
// pairwise tree; the fewest parts within `margin` of the best modeled time.
[[maybe_unused]] static double split_time(int tiles, int k_tiles, int slots, double fixed, double level, int p) {
    const long long waves = ((long long)tiles * p + slots - 1) / slots;
    int levels = 0;
    while ((1 << levels) < p) ++levels;
    return (double)waves * ((double)((k_tiles + p - 1) / p) + fixed) + level * levels;
}
[[maybe_unused]] static int split_parts(int tiles, int k_tiles, int slots, int min_k_tiles, int idle_min_k_tiles,
                                        int max_parts, int counters, double fixed, double level, double margin,
                                        int least) {
    if (tiles < 1 || slots < 1) return 1;
    int limit = k_tiles / (tiles < slots ? idle_min_k_tiles : min_k_tiles);
    if (limit > max_parts) limit = max_parts;
    if (limit > counters / tiles) limit = counters / tiles;
    if (limit < 1) limit = 1;
    const int low = least < 1 ? 1 : least > limit ? limit : least;
    double best = split_time(tiles, k_tiles, slots, fixed, level, low);
    for (int p = low + 1; p <= limit; ++p) best = std::min(best, split_time(tiles, k_tiles, slots, fixed, level, p));
    for (int p = low; p <= limit; ++p)
        if (split_time(tiles, k_tiles, slots, fixed, level, p) <= best * (1 + margin)) return p;
    return low;
}

// The least parts for accuracy (cuda/handoff.py's fewest): where N or K is not a multiple of 4,
// no part sums a chain longer than `chain` elements; 0 bounds nothing.
[[maybe_unused]] static int split_least(int N, int K, int chain) {
    if (chain < 1 || (N % 4 == 0 && K % 4 == 0)) return 1;
    return (N + chain - 1) / chain;
}

// The split-K counters (cuda/handoff.py, kernels/cuda/splitk.cuh): zeroed once, and zero again
// after every call, since the part that arrives second at each node lowers its counter. One
// buffer for the file: an exported solve runs on the default stream of the current device.
[[maybe_unused]] static unsigned* handoff_counters(int count) {
    static unsigned* counters = nullptr;
    if (!counters) {
        unsigned* fresh = nullptr;
        if (!ok(cudaMalloc(&fresh, count * sizeof(unsigned)), "cudaMalloc (split-K counters)")) return nullptr;
        if (!ok(cudaMemset(fresh, 0, count * sizeof(unsigned)), "cudaMemset (split-K counters)")) return nullptr;
        counters = fresh;
    }
    return counters;
}

// More than 48 KiB of dynamic shared memory needs an opt-in per kernel.
template <typename Kernel>
[[maybe_unused]] static bool allow_smem(Kernel kernel, int bytes, const char* label) {
    if (bytes <= 48 * 1024) return true;
    return ok(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes), label);
}

[[maybe_unused]] static cudaLaunchAttribute cluster_attribute(dim3 cluster) {
    cudaLaunchAttribute attr = {};
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = cluster.x;
    attr.val.clusterDim.y = cluster.y;
    attr.val.clusterDim.z = cluster.z;
    return attr;
}

// How many blocks of a kernel the whole GPU holds at once, in whole clusters.
template <typename Kernel>
[[maybe_unused]] static int resident_blocks(Kernel kernel, dim3 block, int smem, dim3 cluster) {
    const int size = cluster.x * cluster.y * cluster.z;
    if (size == 1) {
        int per_sm = 0;
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, block.x * block.y * block.z, smem);
        return per_sm * sm_count();
    }
    cudaLaunchAttribute attr = cluster_attribute(cluster);
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3(size);
    config.blockDim = block;
    config.dynamicSmemBytes = smem;
    config.attrs = &attr;
    config.numAttrs = 1;
    int clusters = 0;
    cudaOccupancyMaxActiveClusters(&clusters, kernel, &config);
    return clusters * size;
}

// A persistent grid: one block per SM at most, no more than fit at once, whole clusters.
[[maybe_unused]] static dim3 persistent_grid(int tiles, int fit, int cluster_size) {
    int blocks = tiles < sm_count() ? tiles : sm_count();
    blocks = (blocks < fit ? blocks : fit) / cluster_size * cluster_size;
    return dim3(blocks > cluster_size ? blocks : cluster_size);
}

// One launch on the default stream; a cluster shape other than 1×1×1 goes through
// cudaLaunchKernelEx. False (and one line on stderr) if the launch failed.
template <typename... Params, typename... Args>
static bool run(const char* label, void (*kernel)(Params...), dim3 grid, dim3 block, int smem,
                dim3 cluster, Args... args) {
    if (cluster.x * cluster.y * cluster.z == 1) {
        kernel<<<grid, block, smem>>>(args...);
        return ok(cudaGetLastError(), label);
    }
    cudaLaunchAttribute attr = cluster_attribute(cluster);
    cudaLaunchConfig_t config = {};
    config.gridDim = grid;
    config.blockDim = block;
    config.dynamicSmemBytes = smem;
    config.stream = 0;
    config.attrs = &attr;
    config.numAttrs = 1;
    return ok(cudaLaunchKernelEx(&config, kernel, args...), label) && ok(cudaGetLastError(), label);
}

}  // namespace gemmlab_host
