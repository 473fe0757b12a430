// The CUDA stack as a machine's files show it (a pip install, NVIDIA's toolkit layout, Debian's
// library packages, links between them) and the rules that compare it with the loaded driver.
#include "acco/topo/software.hpp"

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "acco/core/fs.hpp"
#include "acco/testing/matchers.hpp"
#include "acco/topo/checks.hpp"
#include "acco/topo/probe_report.hpp"
#include "acco/topo/sysfs_source.hpp"

#include "machines.hpp"
#include "sysroot_builder.hpp"

namespace acco::topo {
namespace {

namespace stdfs = std::filesystem;
using ::acco::testing::IsOk;
using acco::testing::TempDir;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

void write(const stdfs::path& path, const std::string& text = "") {
  stdfs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

struct Probed {
  Machine machine;
  std::vector<Finding> findings;
};

Probed probe(const stdfs::path& dir) {
  auto fs = core::make_disk_fs(dir.string());
  EXPECT_THAT(fs, IsOk());
  auto m = discover_sysfs(**fs);
  EXPECT_THAT(m, IsOk());
  return {*m, check(*m)};
}

const Finding* find_rule(const std::vector<Finding>& findings, const std::string& rule) {
  for (const auto& f : findings) {
    if (f.rule == rule) {
      return &f;
    }
  }
  return nullptr;
}

std::vector<std::string> names(const Machine& m) {
  std::vector<std::string> out;
  for (const auto& c : m.software.components) {
    out.push_back(c.name + " " + c.version + " cuda=" + c.cuda + " " + c.path);
  }
  return out;
}

void kernel_module(const stdfs::path& root, const std::string& version) {
  write(
      root / "proc/driver/nvidia/version",
      "NVRM version: NVIDIA UNIX x86_64 Kernel Module  " + version +
          "  Tue Mar  5 22:23:56 UTC 2024\nGCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n");
}

// A PyTorch 2.5 wheel for CUDA 12.4 with its NVIDIA wheels, as pip leaves them.
void pip_torch_cu124(const stdfs::path& root) {
  const auto site = root / "usr/local/lib/python3.11/dist-packages";
  write(site / "torch/version.py",
        "from typing import Optional\n\n__all__ = ['__version__', 'debug', 'cuda', 'git_version', "
        "'hip']\n__version__ = '2.5.1+cu124'\ndebug = False\ncuda: Optional[str] = '12.4'\n"
        "git_version = 'a8d6afb511a69687bbb2b7e88a3cf67917e1697e'\nhip: Optional[str] = None\n");
  write(site / "nvidia_cuda_runtime_cu12-12.4.127.dist-info/METADATA");
  write(site / "nvidia_nccl_cu12-2.21.5.dist-info/METADATA");
  write(site / "nvidia_cudnn_cu12-9.1.0.70.dist-info/METADATA");
  write(site / "nvidia_cuda_runtime_cu12_extra-1.0.dist-info/METADATA");  // not the runtime
  write(site / "numpy-1.26.4.dist-info/METADATA");
}

TEST(SoftwareTest, VersionsCompareNumberByNumber) {
  EXPECT_THAT(version_numbers("580.65.06"), ElementsAre(580, 65, 6));
  EXPECT_THAT(version_numbers("2.5.1+cu124"), ElementsAre(2, 5, 1));
  EXPECT_THAT(version_numbers("v1"), IsEmpty());
  EXPECT_LT(compare_versions("525.60.13", "525.105.17"), 0) << "105 > 60, not '1' < '6'";
  EXPECT_EQ(compare_versions("12.4", "12.4.0"), 0);
  EXPECT_GT(compare_versions("580.65.06", "580.65"), 0);
  EXPECT_EQ(minimum_driver(12), "525.60.13");
  EXPECT_EQ(minimum_driver(13), "580.65.06");
  EXPECT_EQ(minimum_driver(10), "") << "before 11 each minor had its own floor";
  EXPECT_EQ(cuda_major("12.4"), 12);
  EXPECT_EQ(cuda_major(""), 0);
}

TEST(SoftwareTest, APipInstalledTorchAndItsWheelsAreRead) {
  TempDir dir;
  acco::testing::write_dgx_h100(dir.path());
  pip_torch_cu124(dir.path());
  const auto p = probe(dir.path());
  const std::string site = "/usr/local/lib/python3.11/dist-packages";
  EXPECT_THAT(
      names(p.machine),
      ElementsAre("cuda-runtime 12.4.127 cuda=12.4 " + site +
                      "/nvidia_cuda_runtime_cu12-12.4.127.dist-info",
                  "cudnn 9.1.0.70 cuda=12 " + site + "/nvidia_cudnn_cu12-9.1.0.70.dist-info",
                  "nccl 2.21.5 cuda=12 " + site + "/nvidia_nccl_cu12-2.21.5.dist-info",
                  "torch 2.5.1+cu124 cuda=12.4 " + site + "/torch/version.py"));
  EXPECT_EQ(find_rule(p.findings, "cuda-needs-newer-driver"), nullptr) << "no module loaded";
}

// NVIDIA's toolkit layout, reached through the /usr/local/cuda link as well, with CUDA 13's
// wheels in its dist-info (as on this project's build machine), Debian's libnccl2 package, and
// Debian's CPU build of torch 1.13.
TEST(SoftwareTest, ToolkitsLibraryPackagesAndACpuTorchAreEachReadOnce) {
  TempDir dir;
  acco::testing::write_dgx_h100(dir.path());
  const auto cuda = dir.path() / "usr/local/cuda-13.0";
  write(cuda / "version.json", R"({"cuda": {"name": "CUDA SDK", "version": "13.0.2"}})");
  write(cuda / "lib64/libcudart.so.13");  // the major alone: the dist-info says which 13
  write(cuda / "dist-info/nvidia_cuda_runtime-13.0.96.dist-info/METADATA");
  write(cuda / "dist-info/nvidia_nccl_cu13-2.28.9.dist-info/METADATA");
  write(cuda / "compat/libcuda.so.580.65.06");
  stdfs::create_directory_symlink("cuda-13.0", dir.path() / "usr/local/cuda");
  write(dir.path() / "usr/local/cuda-11.0/version.txt", "CUDA Version 11.0.228\n");
  write(dir.path() / "usr/lib/x86_64-linux-gnu/libnccl.so.2.21.5");
  stdfs::create_symlink("libnccl.so.2.21.5", dir.path() / "usr/lib/x86_64-linux-gnu/libnccl.so.2");
  write(dir.path() / "usr/lib/x86_64-linux-gnu/libcudart.so.12.0.146");
  write(dir.path() / "usr/lib/python3/dist-packages/torch/version.py",
        "__version__ = '1.13.1'\ndebug = False\ncuda = None\ngit_version = 'Unknown'\n"
        "hip = None\n");
  const auto p = probe(dir.path());
  EXPECT_THAT(
      names(p.machine),
      ElementsAre("cuda-toolkit 11.0.228 cuda=11.0 /usr/local/cuda-11.0/version.txt",
                  "cuda-toolkit 13.0.2 cuda=13.0 /usr/local/cuda-13.0/version.json",
                  "cuda-runtime 12.0.146 cuda=12.0 /usr/lib/x86_64-linux-gnu/libcudart.so.12.0.146",
                  "nccl 2.21.5 cuda= /usr/lib/x86_64-linux-gnu/libnccl.so.2.21.5",
                  "cuda-runtime 13.0.96 cuda=13.0 "
                  "/usr/local/cuda-13.0/dist-info/nvidia_cuda_runtime-13.0.96.dist-info",
                  "nccl 2.28.9 cuda=13 "
                  "/usr/local/cuda-13.0/dist-info/nvidia_nccl_cu13-2.28.9.dist-info",
                  "cuda-compat 580.65.06 cuda= /usr/local/cuda-13.0/compat/libcuda.so.580.65.06",
                  "torch 1.13.1 cuda= /usr/lib/python3/dist-packages/torch/version.py"));
  EXPECT_THAT(p.machine.input_issues, IsEmpty());
}

// A CUDA 12.4 torch on a 520 driver: below 12.x's floor, with no forward compatibility.
TEST(SoftwareTest, ACudaBuildNewerThanTheDriverIsOneCriticalFindingPerMajor) {
  TempDir dir;
  acco::testing::write_dgx_h100(dir.path());
  pip_torch_cu124(dir.path());
  kernel_module(dir.path(), "520.61.05");
  const auto p = probe(dir.path());
  const auto* f = find_rule(p.findings, "cuda-needs-newer-driver");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kCritical);
  EXPECT_EQ(f->devices.size(), 8U);
  EXPECT_EQ(f->message,
            "CUDA 12 (cuda-runtime 12.4.127, cudnn 9.1.0.70, nccl 2.21.5, torch 2.5.1+cu124) needs "
            "driver 525.60.13 or newer; the loaded kernel module is 520.61.05: its programs fail "
            "with cudaErrorInsufficientDriver (35)");
  EXPECT_THAT(f->recommendation, HasSubstr("Install driver 525.60.13 or newer"));
  EXPECT_EQ(f->evidence.size(), 5U);
  EXPECT_EQ(f->evidence.front().source, "/proc/driver/nvidia/version");

  // A forward-compatibility driver new enough: it may run, on data-center GPUs only.
  write(dir.path() / "usr/local/cuda-12.4/compat/libcuda.so.550.54.15");
  const auto q = probe(dir.path());
  const auto* g = find_rule(q.findings, "cuda-needs-newer-driver");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->severity, Severity::kWarning);
  EXPECT_THAT(g->message, HasSubstr("unless they load the forward-compatibility driver 550.54.15"));
  EXPECT_EQ(find_rule(q.findings, "cuda-compat-older-than-driver"), nullptr);

  // The driver upgraded past both: nothing, except the compat package now left behind.
  kernel_module(dir.path(), "560.35.03");
  const auto r = probe(dir.path());
  EXPECT_EQ(find_rule(r.findings, "cuda-needs-newer-driver"), nullptr);
  const auto* h = find_rule(r.findings, "cuda-compat-older-than-driver");
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(h->severity, Severity::kWarning);
  EXPECT_THAT(h->message, HasSubstr("550.54.15 (/usr/local/cuda-12.4/compat/libcuda.so.550.54.15) "
                                    "is older than the loaded kernel module 560.35.03"));
  EXPECT_THAT(h->message, HasSubstr("(803)"));
}

// Open MPI and UCX from their pkg-config files (Debian's libopenmpi-dev, HPC-X's layout under
// /opt/hpcx), and torch in conda's base and named environments, each with its own CUDA.
TEST(SoftwareTest, MpiUcxAndCondaEnvironmentsAreRead) {
  TempDir dir;
  acco::testing::write_dgx_h100(dir.path());
  write(dir.path() / "usr/lib/x86_64-linux-gnu/pkgconfig/ompi.pc",
        "prefix=/usr\nName: Open MPI\nDescription: Portable high-performance MPI "
        "implementation\nVersion: 4.1.4\nLibs: -L${libdir} -lmpi\n");
  write(dir.path() / "usr/lib/x86_64-linux-gnu/libmpi.so.40.30.4");  // says no release
  write(dir.path() / "opt/hpcx/ucx/lib/pkgconfig/ucx.pc",
        "Name: ucx\nDescription: Unified Communication X Library\nVersion: 1.17.0\n");
  write(dir.path() / "opt/hpcx/ompi/lib/pkgconfig/ompi.pc", "Name: Open MPI\n");  // no version
  write(dir.path() / "opt/conda/lib/python3.11/site-packages/torch/version.py",
        "__version__ = '2.5.1'\ncuda: Optional[str] = '12.1'\n");
  write(dir.path() / "opt/conda/envs/old/lib/python3.9/site-packages/torch/version.py",
        "__version__ = '1.12.1+cu113'\ncuda = '11.3'\n");
  const auto p = probe(dir.path());
  EXPECT_THAT(
      names(p.machine),
      ElementsAre("openmpi 4.1.4 cuda= /usr/lib/x86_64-linux-gnu/pkgconfig/ompi.pc",
                  "ucx 1.17.0 cuda= /opt/hpcx/ucx/lib/pkgconfig/ucx.pc",
                  "torch 2.5.1 cuda=12.1 /opt/conda/lib/python3.11/site-packages/torch/version.py",
                  "torch 1.12.1+cu113 cuda=11.3 "
                  "/opt/conda/envs/old/lib/python3.9/site-packages/torch/version.py"));
  ASSERT_EQ(p.machine.input_issues.size(), 1U);
  EXPECT_EQ(p.machine.input_issues[0].path, "/opt/hpcx/ompi/lib/pkgconfig/ompi.pc");
  const auto text = report::render_text(probe_report(p.machine, p.findings));
  EXPECT_THAT(text, HasSubstr("\nCUDA stack: torch 2.5.1 (CUDA 12.1), torch 1.12.1+cu113 (CUDA "
                              "11.3)\nMPI stack: Open MPI 4.1.4, UCX 1.17.0\n"));
}

TEST(SoftwareTest, FilesThatDoNotSayAVersionAreSkippedOrReported) {
  TempDir dir;
  acco::testing::write_dgx_h100(dir.path());
  write(dir.path() / "usr/local/cuda-12.4/version.json", "{\"cuda\": 12}");
  write(dir.path() / "usr/lib/python3/dist-packages/torch/version.py", "# emptied\n");
  write(dir.path() / "usr/lib/x86_64-linux-gnu/libnccl.so.2.x");
  write(dir.path() / "usr/local/lib/python3.11/dist-packages/nvidia_nccl_cu12-.dist-info/RECORD");
  const auto p = probe(dir.path());
  EXPECT_THAT(p.machine.software.components, IsEmpty());
  std::vector<std::string> paths;
  for (const auto& issue : p.machine.input_issues) {
    paths.push_back(issue.path);
  }
  EXPECT_THAT(paths, ElementsAre("/usr/local/cuda-12.4/version.json",
                                 "/usr/lib/python3/dist-packages/torch/version.py"));
}

}  // namespace
}  // namespace acco::topo
