// ---- TMA descriptors: cuTensorMapEncodeTiled, reached through the runtime ----
// The driver function is looked up with cudaGetDriverEntryPoint, so the file
// links against the CUDA runtime alone: no -lcuda (it does no harm either).
namespace gemmlab_host {

typedef decltype(&cuTensorMapEncodeTiled) EncodeTiled;

[[maybe_unused]] static EncodeTiled encode_tiled() {
    static EncodeTiled fn = nullptr;
    if (fn) return fn;
    void* found = nullptr;
    cudaDriverEntryPointQueryResult status = cudaDriverEntryPointSymbolNotFound;
#if CUDART_VERSION >= 12050
    cudaError_t err = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &found, 12000,
                                                       cudaEnableDefault, &status);
#else
    cudaError_t err = cudaGetDriverEntryPoint("cuTensorMapEncodeTiled", &found, cudaEnableDefault, &status);
#endif
    if (!ok(err, "cudaGetDriverEntryPoint(cuTensorMapEncodeTiled)")) return nullptr;
    if (status != cudaDriverEntryPointSuccess || !found) {
        std::fprintf(stderr, "gemmlab %s: the driver has no cuTensorMapEncodeTiled\n", RUNG);
        return nullptr;
    }
    fn = reinterpret_cast<EncodeTiled>(found);
    return fn;
}

// The descriptor of a rows×cols float32 matrix (row pitch in bytes) whose box is
// box_rows×box_cols, as gemmlab's cuda/tma.py encodes it; out-of-bounds reads are zeros.
// With tf32, the copy engine rounds each value to TF32 on its way into shared memory.
template <typename Desc>
static bool matrix_map(Desc* out, const void* address, int rows, int cols, size_t pitch_bytes,
                       int box_rows, int box_cols, CUtensorMapSwizzle swizzle, bool tf32 = false) {
    static_assert(sizeof(Desc) == sizeof(CUtensorMap), "a TMA descriptor is 128 bytes");
    EncodeTiled encode = encode_tiled();
    if (!encode) return false;
    CUtensorMap map;
    cuuint64_t dims[2] = {(cuuint64_t)cols, (cuuint64_t)rows};  // innermost dimension first
    cuuint64_t strides[1] = {(cuuint64_t)pitch_bytes};
    cuuint32_t box[2] = {(cuuint32_t)box_cols, (cuuint32_t)box_rows};
    cuuint32_t element_strides[2] = {1, 1};
    const CUtensorMapDataType type = tf32 ? CU_TENSOR_MAP_DATA_TYPE_TFLOAT32 : CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    CUresult res = encode(&map, type, 2, const_cast<void*>(address), dims,
                          strides, box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
                          CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (res != CUDA_SUCCESS) {
        std::fprintf(stderr, "gemmlab %s: cuTensorMapEncodeTiled failed (CUresult %d) for a %d×%d "
                     "matrix, pitch %zu B\n", RUNG, (int)res, rows, cols, pitch_bytes);
        return false;
    }
    std::memcpy(out, &map, sizeof map);
    return true;
}

}  // namespace gemmlab_host
