#include "software_source.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <set>
#include <string_view>

#include <nlohmann/json.hpp>

#include "acco/core/units.hpp"
#include "acco/topo/software.hpp"

namespace acco::topo::detail {
namespace {

bool is_version(std::string_view text) {
  return !text.empty() && std::isdigit(static_cast<unsigned char>(text.front())) != 0 &&
         std::all_of(text.begin(), text.end(), [](char c) {
           return c == '.' || std::isdigit(static_cast<unsigned char>(c)) != 0;
         });
}

// /proc/driver/nvidia/version: "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.65.06  Sun
// Jul 27 ..." (the open modules: "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64
// 580.65.06  Release Build ..."); the version is the first dotted number after "Module".
std::string kernel_module_version(std::string_view line) {
  const auto module = line.find("Module");
  if (module == std::string_view::npos) {
    return {};
  }
  for (const auto& word : units::split(line.substr(module), ' ')) {
    if (is_version(word) && word.find('.') != std::string::npos) {
      return word;
    }
  }
  return {};
}

// "4.1.4a1" -> "4.1.4": the leading dotted number.
std::string version_prefix(std::string_view version) {
  std::size_t n = 0;
  while (n < version.size() &&
         (version[n] == '.' || std::isdigit(static_cast<unsigned char>(version[n])) != 0)) {
    ++n;
  }
  return std::string(version.substr(0, n));
}

// "12.4.127" -> "12.4".
std::string major_minor(std::string_view version) {
  const auto parts = version_numbers(version);
  if (parts.size() < 2) {
    return parts.empty() ? std::string() : std::to_string(parts[0]);
  }
  return std::to_string(parts[0]) + "." + std::to_string(parts[1]);
}

class Scan {
 public:
  Scan(core::SysfsReader& in, SoftwareStack& out) : in_(in), out_(out) {}

  // The entries of `dir`, or none when it was already read through another path.
  std::vector<std::string> list_once(const std::string& dir) {
    const auto real = in_.fs().real_path(dir);
    if (!real || !seen_.insert(*real).second) {
      return {};
    }
    return in_.list(dir);
  }

  void add(SoftwareComponent c) {
    const bool dup =
        std::any_of(out_.components.begin(), out_.components.end(), [&](const auto& x) {
          return x.name == c.name && x.version == c.version && x.path == c.path;
        });
    if (!dup) {
      out_.components.push_back(std::move(c));
    }
  }

  // libcudart.so.12.4.127, libnccl.so.2.21.5, libcudnn.so.9.1.0: the name carries the version
  // (a bare libcudart.so.12 does not say which 12, and a wheel's dist-info says it instead).
  void library_dir(const std::string& dir) {
    static constexpr std::array<std::pair<std::string_view, std::string_view>, 3> kLibraries = {
        {{"libcudart.so.", "cuda-runtime"}, {"libnccl.so.", "nccl"}, {"libcudnn.so.", "cudnn"}}};
    for (const auto& entry : list_once(dir)) {
      for (const auto& [prefix, name] : kLibraries) {
        if (!entry.starts_with(prefix)) {
          continue;
        }
        const std::string version = entry.substr(prefix.size());
        if (is_version(version) && version.find('.') != std::string::npos) {
          add({std::string(name), version, name == "cuda-runtime" ? major_minor(version) : "",
               dir + "/" + entry});
        }
      }
    }
  }

  // nvidia_cuda_runtime_cu12-12.4.127.dist-info, nvidia_cuda_runtime-13.0.96.dist-info (CUDA
  // 13's wheels dropped the suffix for the toolkit's own parts), nvidia_nccl_cu13-2.28.9,
  // nvidia_cudnn_cu12-9.1.0.70.
  void dist_info_dir(const std::string& dir) {
    static constexpr std::array<std::pair<std::string_view, std::string_view>, 3> kWheels = {
        {{"nvidia_cuda_runtime", "cuda-runtime"},
         {"nvidia_nccl", "nccl"},
         {"nvidia_cudnn", "cudnn"}}};
    for (const auto& entry : list_once(dir)) {
      if (!entry.ends_with(".dist-info")) {
        continue;
      }
      const auto stem = std::string_view(entry).substr(0, entry.size() - 10);
      const auto dash = stem.rfind('-');
      if (dash == std::string_view::npos) {
        continue;
      }
      const auto project = stem.substr(0, dash);
      const auto version = std::string(stem.substr(dash + 1));
      for (const auto& [prefix, name] : kWheels) {
        if (!project.starts_with(prefix) || !is_version(version)) {
          continue;
        }
        auto rest = project.substr(prefix.size());
        std::string cuda;
        if (rest.starts_with("_cu") && is_version(rest.substr(3))) {
          cuda = std::string(rest.substr(3));
        } else if (!rest.empty()) {
          continue;  // nvidia_cuda_runtime_something_else
        }
        if (name == "cuda-runtime") {
          cuda = major_minor(version);
        }
        add({std::string(name), version, cuda, dir + "/" + entry});
      }
    }
  }

  // torch/version.py: `__version__ = '2.5.1+cu124'` and `cuda = None` (1.13, a CPU build) or
  // `cuda: Optional[str] = '12.4'` (2.x).
  void torch(const std::string& site) {
    const std::string path = site + "/torch/version.py";
    const auto text = in_.read(path);
    if (!text) {
      return;
    }
    SoftwareComponent c{"torch", "", "", path};
    for (const auto& raw : units::split(*text, '\n')) {
      const std::string_view line = raw;
      const auto eq = line.find('=');
      if (eq == std::string_view::npos) {
        continue;
      }
      auto key = line.substr(0, line.find_first_of(":= "));
      const auto quote = line.find_first_of("'\"", eq);
      const auto end = quote == std::string_view::npos ? quote : line.find(line[quote], quote + 1);
      const auto value = end == std::string_view::npos
                             ? std::string()
                             : std::string(line.substr(quote + 1, end - quote - 1));
      if (key == "__version__") {
        c.version = value;
      } else if (key == "cuda") {
        c.cuda = value;
      }
    }
    if (c.version.empty()) {
      in_.malformed(path, "a line __version__ = '<version>'", *text);
      return;
    }
    add(std::move(c));
  }

  // version.json's {"cuda": {"version": "12.4.1"}}; before 11.1, version.txt's "CUDA Version
  // 11.0.228".
  void toolkit(const std::string& root) {
    if (const auto text = in_.read(root + "/version.json")) {
      const auto j = nlohmann::json::parse(*text, nullptr, false);
      if (j.is_object() && j.contains("cuda") && j["cuda"].is_object() &&
          j["cuda"].value("version", nlohmann::json()).is_string() &&
          is_version(j["cuda"]["version"].get<std::string>())) {
        const auto version = j["cuda"]["version"].get<std::string>();
        add({"cuda-toolkit", version, major_minor(version), root + "/version.json"});
      } else {
        in_.malformed(root + "/version.json", R"(JSON with "cuda": {"version": "<x.y.z>"})", *text);
      }
    } else if (const auto txt = in_.read(root + "/version.txt")) {
      const auto words = units::split(units::trim(*txt), ' ');
      if (words.size() == 3 && words[0] == "CUDA" && is_version(words[2])) {
        add({"cuda-toolkit", words[2], major_minor(words[2]), root + "/version.txt"});
      }
    }
  }

  // pkg-config files' "Version: 4.1.4" (the development packages, HPC-X and source builds
  // install them; the runtime libraries' names do not carry the release: libmpi.so.40.30.4 is
  // Open MPI 4.1.4's, libucp.so.0.0.0 any UCX's).
  void pkgconfig_dir(const std::string& dir) {
    static constexpr std::array<std::pair<std::string_view, std::string_view>, 2> kFiles = {
        {{"ompi.pc", "openmpi"}, {"ucx.pc", "ucx"}}};
    for (const auto& entry : list_once(dir)) {
      for (const auto& [file, name] : kFiles) {
        if (entry != file) {
          continue;
        }
        const std::string path = dir + "/" + entry;
        const auto text = in_.read(path);
        if (!text) {
          continue;
        }
        std::string version;
        for (const auto& line : units::split(*text, '\n')) {
          if (line.starts_with("Version:")) {
            version = units::trim(line.substr(8));
          }
        }
        if (!version.empty() && is_version(version_prefix(version))) {
          add({std::string(name), version, "", path});
        } else {
          in_.malformed(path, "a line Version: <x.y.z>", *text);
        }
      }
    }
  }

  // compat/libcuda.so.580.65.06: the driver version the forward-compatibility package carries.
  void compat(const std::string& root) {
    const std::string dir = root + "/compat";
    for (const auto& entry : list_once(dir)) {
      const std::string_view prefix = "libcuda.so.";
      if (entry.starts_with(prefix) && is_version(entry.substr(prefix.size())) &&
          entry.find('.', prefix.size()) != std::string::npos) {
        add({"cuda-compat", entry.substr(prefix.size()), "", dir + "/" + entry});
      }
    }
  }

 private:
  core::SysfsReader& in_;
  SoftwareStack& out_;
  std::set<std::string> seen_;
};

// The entries of `dir` whose names start with `prefix`, as their real paths (/usr/local/cuda
// -> /usr/local/cuda-13.0), each once, sorted.
std::vector<std::string> starting_with(core::SysfsReader& in, const std::string& dir,
                                       std::string_view prefix) {
  std::vector<std::string> out;
  for (const auto& entry : in.list(dir)) {
    if (entry.starts_with(prefix)) {
      const auto real = in.fs().real_path(dir + "/" + entry);
      if (real && std::find(out.begin(), out.end(), *real) == out.end()) {
        out.push_back(*real);
      }
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

void read_software(core::SysfsReader& in, Machine& m) {
  auto& fs = in.fs();
  SoftwareStack& s = m.software;
  for (const auto& line : units::split(in.text("/proc/driver/nvidia/version").value_or(""), '\n')) {
    if (line.starts_with("NVRM version:")) {
      s.kernel_module_line = units::excerpt(line);
      s.kernel_module = kernel_module_version(line);
    }
  }
  for (const char* dir : {"/etc/cdi", "/var/run/cdi"}) {
    auto names = fs.list_dir(dir).value_or(std::vector<std::string>{});
    std::sort(names.begin(), names.end());
    for (const auto& name : names) {
      if (name.ends_with(".json") || name.ends_with(".yaml") || name.ends_with(".yml")) {
        s.cdi_specs.push_back(std::string(dir) + "/" + name);
      }
    }
  }

  Scan scan(in, s);
  const auto cuda_roots = starting_with(in, "/usr/local", "cuda");
  for (const auto& root : cuda_roots) {
    scan.toolkit(root);
  }
  for (const char* dir : {"/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
                          "/usr/lib/powerpc64le-linux-gnu", "/usr/lib64", "/usr/local/lib"}) {
    scan.library_dir(dir);
  }
  for (const char* dir :
       {"/usr/lib/x86_64-linux-gnu/pkgconfig", "/usr/lib/aarch64-linux-gnu/pkgconfig",
        "/usr/lib/powerpc64le-linux-gnu/pkgconfig", "/usr/lib64/pkgconfig", "/usr/lib/pkgconfig",
        "/usr/local/lib/pkgconfig", "/opt/hpcx/ompi/lib/pkgconfig",
        "/opt/hpcx/ucx/lib/pkgconfig"}) {
    scan.pkgconfig_dir(dir);
  }
  // Python environments: the system's, and conda's base and named environments where NVIDIA's
  // and the conda-forge images put them (/opt/conda; Miniconda and Miniforge installed in /opt).
  std::vector<std::string> prefixes = {"/usr/local/lib", "/usr/lib"};
  for (const char* conda : {"/opt/conda", "/opt/miniconda3", "/opt/miniforge3"}) {
    prefixes.push_back(std::string(conda) + "/lib");
    for (const auto& env : starting_with(in, std::string(conda) + "/envs", "")) {
      prefixes.push_back(env + "/lib");
    }
  }
  std::vector<std::string> sites = {"/usr/lib/python3/dist-packages"};
  for (const auto& prefix : prefixes) {
    for (const auto& python : starting_with(in, prefix, "python3")) {
      sites.push_back(python + "/dist-packages");
      sites.push_back(python + "/site-packages");
    }
  }
  for (const auto& root : cuda_roots) {
    scan.library_dir(root + "/lib64");
    for (const auto& target : starting_with(in, root + "/targets", "")) {
      scan.library_dir(target + "/lib");
    }
    scan.dist_info_dir(root + "/dist-info");
    scan.compat(root);
  }
  std::set<std::string> seen_sites;
  for (const auto& site : sites) {
    const auto real = fs.real_path(site);
    if (real && seen_sites.insert(*real).second) {
      scan.dist_info_dir(*real);
      scan.torch(*real);
    }
  }
}

}  // namespace acco::topo::detail
