// The CUDA backend on a machine without a usable driver (CI, laptops): libmxq must load without
// libcuda, never link libcuda or libcudart, and answer mxqCreate with a clear status and message
// instead of crashing. Runs everywhere; on a GPU machine the default-path test accepts success.
//
// The driver is loaded once per process, so the MXQ_CUDA_DRIVER_PATH tests run in a child process
// (this executable re-run with a hidden test name and the variable set): their result does not
// depend on whether another test in this process already created a CUDA handle.
#include <catch2/catch.hpp>

#include <dlfcn.h>
#include <elf.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "mxq/mxq.h"

namespace {

bool built_with_kernels() { return std::string(mxqGetBuildInfo()).find("cuda-kernels=yes") != std::string::npos; }

bool library_loaded(const char* soname) {
  void* h = dlopen(soname, RTLD_NOW | RTLD_NOLOAD);
  if (h) dlclose(h);
  return h != nullptr;
}

const char* const kCudaLibs[] = {"libcuda.so.1", "libcuda.so", "libcudart.so.13", "libcudart.so.12", "libcudart.so"};

std::string self_exe() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  REQUIRE(n > 0);
  buf[n] = 0;
  return buf;
}

// Runs one hidden test of this executable in a child process with MXQ_CUDA_DRIVER_PATH=path and
// returns its exit status; `output` receives what it printed.
int run_child(const std::string& test_name, const std::string& driver_path, std::string* output) {
  const std::string cmd = "env MXQ_CUDA_DRIVER_PATH='" + driver_path + "' '" + self_exe() + "' '" + test_name + "' 2>&1";
  FILE* f = popen(cmd.c_str(), "r");
  REQUIRE(f != nullptr);
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) output->append(buf, n);
  const int st = pclose(f);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

void require_child_passes(const std::string& test_name, const std::string& driver_path) {
  std::string out;
  const int rc = run_child(test_name, driver_path, &out);
  INFO("child '" << test_name << "' with MXQ_CUDA_DRIVER_PATH=" << driver_path << " exited " << rc << ":\n" << out);
  CHECK(rc == 0);
  CHECK(out.find("All tests passed") != std::string::npos);  // the test ran (a name typo would not pass)
}

// DT_NEEDED entries of an ELF64 shared object, read from the file (no readelf needed).
std::vector<std::string> needed_libraries(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in.good());
  const std::vector<char> img((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  REQUIRE(img.size() > sizeof(Elf64_Ehdr));
  Elf64_Ehdr eh;
  std::memcpy(&eh, img.data(), sizeof eh);
  REQUIRE(std::memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0);
  REQUIRE(eh.e_ident[EI_CLASS] == ELFCLASS64);
  std::vector<Elf64_Phdr> ph(eh.e_phnum);
  for (int i = 0; i < eh.e_phnum; ++i)
    std::memcpy(&ph[i], img.data() + eh.e_phoff + static_cast<size_t>(i) * eh.e_phentsize, sizeof(Elf64_Phdr));
  auto vaddr_to_offset = [&](uint64_t va) -> uint64_t {
    for (const auto& p : ph)
      if (p.p_type == PT_LOAD && va >= p.p_vaddr && va < p.p_vaddr + p.p_filesz) return va - p.p_vaddr + p.p_offset;
    FAIL("address not in a PT_LOAD segment");
    return 0;
  };
  std::vector<uint64_t> needed;
  uint64_t strtab = 0;
  for (const auto& p : ph) {
    if (p.p_type != PT_DYNAMIC) continue;
    for (uint64_t off = p.p_offset; off + sizeof(Elf64_Dyn) <= p.p_offset + p.p_filesz; off += sizeof(Elf64_Dyn)) {
      Elf64_Dyn d;
      std::memcpy(&d, img.data() + off, sizeof d);
      if (d.d_tag == DT_NULL) break;
      if (d.d_tag == DT_NEEDED) needed.push_back(d.d_un.d_val);
      if (d.d_tag == DT_STRTAB) strtab = d.d_un.d_ptr;
    }
  }
  REQUIRE(strtab != 0);
  const uint64_t base = vaddr_to_offset(strtab);
  std::vector<std::string> names;
  for (uint64_t n : needed) names.emplace_back(img.data() + base + n);
  return names;
}

}  // namespace

TEST_CASE("cuda without a driver: libmxq links neither libcuda nor libcudart", "[cuda][no_driver]") {
  Dl_info info{};
  REQUIRE(dladdr(reinterpret_cast<void*>(&mxqGetVersion), &info) != 0);
  REQUIRE(info.dli_fname != nullptr);
  const std::vector<std::string> needed = needed_libraries(info.dli_fname);
  std::string all;
  for (const auto& n : needed) all += n + " ";
  INFO(info.dli_fname << " NEEDED: " << all);
  CHECK(!needed.empty());  // the parser found the dynamic section (libc at least)
  for (const auto& n : needed) {
    CHECK(n.rfind("libcuda", 0) != 0);  // covers libcuda.so* and libcudart.so*
    CHECK(n.find("nvrtc") == std::string::npos);
  }
}

TEST_CASE("cuda without a driver: a missing MXQ_CUDA_DRIVER_PATH library gives DRIVER_NOT_FOUND", "[cuda][no_driver]") {
  require_child_passes("cuda child: missing driver library", "/nonexistent/mxq-test/libcuda.so.1");
}

TEST_CASE("cuda without a driver: the toolkit's stub libcuda is recognised", "[cuda][no_driver]") {
  const char* candidates[] = {"/usr/local/cuda/lib64/stubs/libcuda.so",
                              "/usr/local/cuda/targets/x86_64-linux/lib/stubs/libcuda.so",
                              "/usr/local/cuda/targets/sbsa-linux/lib/stubs/libcuda.so"};
  std::string stub;
  for (const char* c : candidates)
    if (access(c, R_OK) == 0) {
      stub = c;
      break;
    }
  if (stub.empty()) {
    WARN("no CUDA toolkit stub libcuda on this machine; nothing to check");
    return;
  }
  require_child_passes("cuda child: stub driver library", stub);
}

TEST_CASE("cuda without a driver: the default driver path", "[cuda][no_driver]") {
  void* probe = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  mxqHandle_t h = nullptr;
  const mxqStatus_t s = mxqCreate(&h);
  const std::string msg = mxqGetLastErrorMessage();
  INFO(mxqGetStatusName(s) << ": " << msg);
  if (!built_with_kernels()) {
    CHECK(s == MXQ_STATUS_NOT_SUPPORTED_BACKEND);
    CHECK(msg.find("CUDA") != std::string::npos);
  } else if (!probe) {
    // This machine has no driver: the documented status, a message naming what was looked for.
    CHECK(s == MXQ_STATUS_CUDA_DRIVER_NOT_FOUND);
    CHECK(msg.find("libcuda.so.1") != std::string::npos);
    CHECK(h == nullptr);
  } else {
    // A driver exists: either a device works or the status says there is none.
    CHECK((s == MXQ_STATUS_SUCCESS || s == MXQ_STATUS_CUDA_NO_DEVICE));
    if (s != MXQ_STATUS_SUCCESS) CHECK(!msg.empty());
  }
  if (h) CHECK(mxqDestroy(h) == MXQ_STATUS_SUCCESS);
  if (probe) dlclose(probe);
  // The CPU backend is unaffected either way.
  mxqHandle_t cpu = nullptr;
  CHECK(mxqCreateWithBackend(&cpu, MXQ_BACKEND_CPU, 0) == MXQ_STATUS_SUCCESS);
  CHECK(mxqDestroy(cpu) == MXQ_STATUS_SUCCESS);
}

// ---- hidden tests run by the child processes above -------------------------------------------------

TEST_CASE("cuda child: missing driver library", "[.cuda_child]") {
  // Loading libmxq loaded no CUDA library.
  for (const char* lib : kCudaLibs) {
    INFO(lib);
    CHECK(!library_loaded(lib));
  }
  const char* path = std::getenv("MXQ_CUDA_DRIVER_PATH");
  REQUIRE(path != nullptr);
  mxqHandle_t h = reinterpret_cast<mxqHandle_t>(0x1);
  const mxqStatus_t s = mxqCreate(&h);
  const std::string msg = mxqGetLastErrorMessage();
  INFO(mxqGetStatusName(s) << ": " << msg);
  CHECK(h == reinterpret_cast<mxqHandle_t>(0x1));  // nothing written on failure
  if (built_with_kernels()) {
    CHECK(s == MXQ_STATUS_CUDA_DRIVER_NOT_FOUND);
    CHECK(msg.find(path) != std::string::npos);
    CHECK(msg.find("MXQ_CUDA_DRIVER_PATH") != std::string::npos);
    // A second attempt fails the same way (failures are not cached as success, nor crash).
    CHECK(mxqCreateWithBackend(&h, MXQ_BACKEND_CUDA, 0) == MXQ_STATUS_CUDA_DRIVER_NOT_FOUND);
  } else {
    CHECK(s == MXQ_STATUS_NOT_SUPPORTED_BACKEND);
  }
  CHECK(std::string(mxqGetStatusName(s)).rfind("MXQ_STATUS_", 0) == 0);
  for (const char* lib : kCudaLibs) {
    INFO(lib);
    CHECK(!library_loaded(lib));
  }
}

TEST_CASE("cuda child: stub driver library", "[.cuda_child]") {
  mxqHandle_t h = nullptr;
  const mxqStatus_t s = mxqCreate(&h);
  const std::string msg = mxqGetLastErrorMessage();
  INFO(mxqGetStatusName(s) << ": " << msg);
  CHECK(h == nullptr);
  if (built_with_kernels()) {
    CHECK(s == MXQ_STATUS_CUDA_DRIVER_NOT_FOUND);
    CHECK(msg.find("stub") != std::string::npos);
  } else {
    CHECK(s == MXQ_STATUS_NOT_SUPPORTED_BACKEND);
  }
}
