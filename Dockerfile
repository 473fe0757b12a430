# acco in a container: a Debian 12 build stage and a runtime stage with the binary and its runtime
# libraries only. Build without a registry or daemon: scripts/container-test (debootstrap, podman
# or buildah). Run on a GPU machine with the NVIDIA Container Toolkit:
#   docker run --rm --gpus all --ipc=host --ulimit memlock=-1:-1 acco doctor --no-bench
#   podman run --rm --device nvidia.com/gpu=all --ipc=host --ulimit memlock=-1:-1 acco doctor
# (docs/containers.md: several nodes over InfiniBand, CDI, Apptainer).

# The Debian 12 image both stages start from; scripts/container-test passes one it made itself.
ARG DEBIAN_IMAGE=docker.io/library/debian:12
# Where the runtime stage takes /opt/acco from: "build" compiles here; "prebuilt" copies an
# install tree from the build context (prebuilt/opt/acco), as scripts/container-test does.
ARG ACCO_FROM=build

FROM ${DEBIAN_IMAGE} AS build
ENV DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      build-essential cmake ninja-build pkg-config ca-certificates \
      libexpected-dev libcli11-dev nlohmann-json3-dev libfmt-dev libspdlog-dev libhwloc-dev libxml2-dev \
      libsqlite3-dev prometheus-cpp-dev libcpp-httplib-dev liburing-dev libopenmpi-dev \
 && rm -rf /var/lib/apt/lists/*
COPY . /src
RUN cmake -S /src -B /build -G Ninja -DCMAKE_BUILD_TYPE=Release -DACCO_BUILD_TESTS=OFF \
      -DACCO_BUILD_BENCH=OFF -DACCO_BUILD_EXAMPLES=OFF -DACCO_WITH_PYTHON=OFF \
      -DCMAKE_INSTALL_PREFIX=/opt/acco \
 && cmake --build /build \
 && cmake --install /build

FROM scratch AS prebuilt
COPY prebuilt/opt/acco /opt/acco

FROM ${ACCO_FROM} AS acco-files

FROM ${DEBIAN_IMAGE} AS runtime
ENV DEBIAN_FRONTEND=noninteractive
# What the acco binary and acco-sim-engine (SimGrid) link (ldd), the PCI ID database it names
# devices from, nothing else.
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      libcpp-httplib0.11 libfmt9 libhwloc15 libopenmpi3 libprometheus-cpp-core1.0 \
      libsimgrid3.32 libspdlog1.10 libsqlite3-0 liburing2 pci.ids \
 && rm -rf /var/lib/apt/lists/*
COPY --from=acco-files /opt/acco/bin /opt/acco/bin
COPY --from=acco-files /opt/acco/libexec /opt/acco/libexec
COPY --from=acco-files /opt/acco/share/man /opt/acco/share/man
COPY --from=acco-files /opt/acco/share/bash-completion /opt/acco/share/bash-completion
ENV PATH=/opt/acco/bin:${PATH}
# The NVIDIA Container Toolkit mounts the driver's libraries and device nodes for these.
ENV NVIDIA_VISIBLE_DEVICES=all NVIDIA_DRIVER_CAPABILITIES=compute,utility
RUN useradd --create-home --uid 10001 --shell /usr/sbin/nologin acco
USER acco
WORKDIR /home/acco
# Healthy while this container can run its work: every mismatch of GPU, CPUs, memory, /dev/shm
# and locked memory makes `acco exec --check` exit 1.
HEALTHCHECK --interval=60s --timeout=20s CMD ["acco", "exec", "--check", "--json"]
ENTRYPOINT ["acco"]
CMD ["doctor", "--no-bench"]
