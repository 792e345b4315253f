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

// Split-K parts per tile for `slots` resident blocks: cuda/handoff.py's parts(), the same
// rule (a test runs both over a grid of inputs): fill the slots, keep min_steps steps per
// part, and do not split reductions longer than max_n or shapes whose tiles fill the GPU.
[[maybe_unused]] static int split_parts(int tiles, int steps, int n, int slots, int max_n, int min_steps) {
    if (n > max_n || tiles < 1 || tiles >= slots) return 1;
    int parts = slots / tiles;
    if (parts > steps / min_steps) parts = steps / min_steps;
    return parts < 1 ? 1 : parts;
}

// The split-K flags of bigtile's SPLIT 1 (cuda/handoff.py): zeroed once, and zero again
// after every call, since each flag raised is lowered by the block that waited on it. One
// buffer for the file: an exported solve runs on the default stream of the current device.
[[maybe_unused]] static unsigned* handoff_flags(int count) {
    static unsigned* flags = nullptr;
    if (!flags) {
        unsigned* fresh = nullptr;
        if (!ok(cudaMalloc(&fresh, count * sizeof(unsigned)), "cudaMalloc (split-K flags)")) return nullptr;
        if (!ok(cudaMemset(fresh, 0, count * sizeof(unsigned)), "cudaMemset (split-K flags)")) return nullptr;
        flags = fresh;
    }
    return flags;
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
