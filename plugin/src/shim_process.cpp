// The process's one Shim, behind the exported ncclX functions: configured from the environment
// and backed by the GPU runtime. Not part of weft_nccl_shim, so that the shim's logic links into
// tests without the CUDA runtime.
#include "shim.h"

namespace weft::plugin {

Shim& Shim::process() {
  // Never destroyed: other libraries' destructors may still call NCCL at exit, after this
  // library's static objects would be gone.
  static Shim* const shim = [] {
    ShimConfig config = shim_config_from_env(process_environment());
    NcclLibrary nccl;
    if (config.standalone && !config.disabled) {
      nccl.origin = "no NCCL (standalone mode)";
      nccl.error = "standalone mode (WEFT_STANDALONE=1) does not forward to NCCL";
    } else {
      nccl = resolve_nccl(config.nccl_library);
    }
    // Host mode (standalone, WEFT_DEVICE=host) runs the kernels on CPU threads.
    std::unique_ptr<WeftBackend> backend =
        config.host_device ? make_host_backend() : make_cuda_backend();
    return new Shim(std::move(config), std::move(nccl), std::move(backend));
  }();
  return *shim;
}

}  // namespace weft::plugin
