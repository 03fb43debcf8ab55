// make_ucx_engine in a build made without UCX's headers (libucx-dev): the proxy reports what is
// missing, and calls that would need it stay with whoever else can run them.
#include "weft/proxy/engine.h"

namespace weft::proxy {

Result<std::unique_ptr<Engine>> make_ucx_engine(const EngineOptions& /*options*/) {
  return Status::error(ErrorCode::SystemError,
                       "this build of Weft has no UCX (its headers, Debian's libucx-dev, were "
                       "missing when it was built): nothing can cross hosts");
}

}  // namespace weft::proxy
