// Version and build description.
#include <string>

#include "api/guard.h"

#ifndef MXQ_GIT_REVISION
#define MXQ_GIT_REVISION "unknown"
#endif
#ifndef MXQ_EMBEDDED_ARCHS
#define MXQ_EMBEDDED_ARCHS "none"
#endif
#ifndef MXQ_CUDA_TOOLKIT_VERSION
#define MXQ_CUDA_TOOLKIT_VERSION "none"
#endif

extern "C" {

MXQ_API uint32_t mxqGetVersion(void) { return MXQ_VERSION; }

MXQ_API const char* mxqGetBuildInfo(void) {
  static const std::string info = std::string("mxq ") + MXQ_VERSION_STRING + " (git " MXQ_GIT_REVISION
#ifdef MXQ_HAVE_CUDA_KERNELS
                                  ") cuda-kernels=yes sm=" MXQ_EMBEDDED_ARCHS " ptx=compute_90 nvcc=" MXQ_CUDA_TOOLKIT_VERSION
#else
                                  ") cuda-kernels=no"
#endif
                                  " compiler=" __VERSION__;
  return info.c_str();
}

}  // extern "C"
