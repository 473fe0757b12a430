#!/bin/sh
# Four emulated nodes for `acco probe --cluster`: network namespaces joined by veth to a bridge,
# the fourth node's link shaped to 100 Mbit/s with tbf, mpirun reaching each namespace through an
# rsh agent (no ssh) that gives each its own host name. Writes rank 0's JSON to OUT, and with
# BENCH_OUT that of a small `acco bench --collective allreduce` over the same four nodes.
#   netns_cluster.sh ACCO MPIEXEC OUT [BENCH_OUT]
# Exit 77 with the reason on stderr when this machine refuses the setup (not root, no ip or tc,
# namespaces or veth not permitted); everything it made is removed on exit.
set -u
acco=$1 mpiexec=$2 out=$3 bench_out=${4:-}
skip() { echo "netns cluster: $*" >&2; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root (CAP_NET_ADMIN) for network namespaces"
command -v ip >/dev/null || skip "no ip (iproute2)"
command -v tc >/dev/null || skip "no tc (iproute2)"
command -v unshare >/dev/null || skip "no unshare (util-linux)"

id=$$
tag=$((id % 10000))
bridge=acb$tag
dir=$(mktemp -d)
cleanup() {
  for i in 1 2 3 4; do ip netns del "acn$tag-$i" 2>/dev/null; done
  ip link del "$bridge" 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT INT TERM
subnet=10.$((79 + tag % 100)).$((tag / 100 % 250)).0
net=${subnet%.0}

ip link add "$bridge" type bridge 2>"$dir/err" || skip "bridge refused: $(cat "$dir/err")"
ip addr add "$net.1/24" dev "$bridge" && ip link set "$bridge" up || skip "bridge address refused"
hosts=""
for i in 1 2 3 4; do
  ns=acn$tag-$i
  ip netns add "$ns" 2>"$dir/err" || skip "netns refused: $(cat "$dir/err")"
  ip link add "acv$tag-$i" type veth peer name eth0 netns "$ns" 2>"$dir/err" ||
    skip "veth refused: $(cat "$dir/err")"
  ip link set "acv$tag-$i" master "$bridge" up
  ip -n "$ns" addr add "$net.1$i/24" dev eth0
  ip -n "$ns" link set eth0 up
  ip -n "$ns" link set lo up
  hosts="$hosts${hosts:+,}$net.1$i:1"
done
ip netns exec "acn$tag-1" unshare --uts true 2>"$dir/err" ||
  skip "ip netns exec with unshare --uts refused: $(cat "$dir/err")"
# Traffic into node 4 goes through this qdisc: its link is the slow one. Node 4's own side is
# shaped too, where its probe can read the rate (a veth reads 10 Gb/s in sysfs whatever the tbf).
tc qdisc add dev "acv$tag-4" root tbf rate 100mbit burst 32kb latency 50ms 2>"$dir/err" ||
  skip "tc tbf refused: $(cat "$dir/err")"
ip netns exec "acn$tag-4" tc qdisc add dev eth0 root tbf rate 100mbit burst 32kb latency 50ms \
  2>"$dir/err" || skip "tc tbf in a namespace refused: $(cat "$dir/err")"

cat >"$dir/rsh" <<AGENT
#!/bin/sh
host=\$1; shift
n=\${host##*.1}
exec ip netns exec "acn$tag-\$n" unshare --uts sh -c "hostname node\$n; \$*"
AGENT
chmod +x "$dir/rsh"

run4() {
  timeout 120 "$mpiexec" --allow-run-as-root --oversubscribe --bind-to none -H "$hosts" -np 4 \
    --mca plm_rsh_agent "$dir/rsh" --mca oob_tcp_if_include "$net.0/24" --mca btl self,tcp \
    --mca btl_tcp_if_include "$net.0/24" "$acco" "$@"
}
run4 probe --cluster --json --pair-bytes 1MiB >"$out" || exit
if [ -n "$bench_out" ]; then
  run4 bench --collective allreduce --min-bytes 4KiB --max-bytes 64KiB --factor 4 --iters 3 \
    --warmup 1 --json >"$bench_out"
fi
