#!/bin/sh
# Two emulated Slurm nodes on this machine (../shared/reference/multinode.md d9): munged,
# slurmctld and two slurmd (`slurmd -N node1`, `-N node2`) on 127.0.0.1, each on its own port and
# in its own mount namespace with its own PMIx directory (PMIxCliTmpDirBase does not expand %n);
# then `srun -N2 -n2 --mpi=pmix` runs `acco bench --collective` and `acco schedule --distributed`
# with MPI over TCP (the two "nodes" share /dev/shm and the host name).
#   slurm_cluster.sh ACCO OUTDIR
# Writes OUTDIR/collective.json, OUTDIR/schedule.json and OUTDIR/nodes (srun's view: one line
# per task, SLURMD_NODENAME SLURM_PROCID). Exit 77 with the reason on stderr when this machine
# cannot run it (not root, no Slurm or munge, a daemon that does not start); every daemon it
# started is stopped and its files removed on exit.
set -u
acco=$1 out=$2
dir=$(mktemp -d /tmp/acco-slurm.XXXXXX)
logs() { for f in "$dir"/*.log; do [ -f "$f" ] && { echo "== $f"; tail -n 5 "$f"; }; done >&2; }
skip() { echo "slurm cluster: $*" >&2; logs; exit 77; }
cleanup() {
  for f in "$dir"/slurmd-node1.pid "$dir"/slurmd-node2.pid "$dir"/slurmctld.pid "$dir"/munged.pid; do
    [ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null
  done
  sleep 1
  for f in "$dir"/*.pid; do [ -f "$f" ] && kill -9 "$(cat "$f")" 2>/dev/null; done
  for n in node1 node2; do umount "$dir/pmix" 2>/dev/null; done
  rm -rf "$dir"
}
trap cleanup EXIT INT TERM
[ "$(id -u)" = 0 ] || skip "needs root (slurmd, a mount namespace per node)"
for c in munged slurmctld slurmd srun sinfo unshare; do
  command -v "$c" >/dev/null || skip "no $c (Debian: slurm-wlm, munge)"
done

base=$((20000 + $$ % 20000))
mkdir -p "$dir/state" "$dir/spool-node1" "$dir/spool-node2" "$dir/pmix" "$dir/pmix-node1" \
  "$dir/pmix-node2"
dd if=/dev/urandom of="$dir/munge.key" bs=1024 count=1 2>/dev/null
chmod 400 "$dir/munge.key"
munged --force --key-file="$dir/munge.key" --socket="$dir/munge.sock" \
  --pid-file="$dir/munged.pid" --log-file="$dir/munged.log" --seed-file="$dir/munge.seed" \
  2>"$dir/munged-start.log" || skip "munged did not start: $(cat "$dir/munged-start.log")"

cat >"$dir/slurm.conf" <<CONF
ClusterName=acco
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$base
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge.sock
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool-%n
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd-%n.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd-%n.log
SlurmdParameters=config_overrides
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
ReturnToService=2
InactiveLimit=0
KillWait=5
NodeName=node1 NodeHostname=localhost NodeAddr=127.0.0.1 Port=$((base + 1)) CPUs=2 State=UNKNOWN
NodeName=node2 NodeHostname=localhost NodeAddr=127.0.0.1 Port=$((base + 2)) CPUs=2 State=UNKNOWN
PartitionName=acco Nodes=node1,node2 Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE
CONF
echo "PMIxCliTmpDirBase=$dir/pmix" >"$dir/mpi.conf"
export SLURM_CONF="$dir/slurm.conf"

slurmctld -f "$SLURM_CONF" 2>"$dir/slurmctld-start.log" ||
  skip "slurmctld did not start: $(cat "$dir/slurmctld-start.log")"
for n in node1 node2; do
  unshare -m --propagation private sh -c \
    "mount --bind '$dir/pmix-$n' '$dir/pmix' && exec slurmd -N $n -f '$SLURM_CONF'" \
    2>"$dir/slurmd-$n-start.log" || skip "slurmd -N $n did not start: $(cat "$dir/slurmd-$n-start.log")"
done
idle=0
for _ in $(seq 1 60); do
  idle=$(sinfo -h -N -o "%N %t" 2>/dev/null | grep -c " idle")
  [ "$idle" = 2 ] && break
  sleep 0.5
done
[ "$idle" = 2 ] || skip "the two nodes did not come up: $(sinfo -N 2>&1 | tr '\n' ' ')"

# Open MPI over TCP on loopback: the emulated nodes share /dev/shm and the host name.
export OMPI_MCA_btl=self,tcp OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
run() { timeout 120 srun -N2 -n2 --mpi=pmix "$@"; }
run sh -c 'echo "$SLURMD_NODENAME $SLURM_PROCID"' >"$out/nodes" 2>"$dir/srun.log" ||
  { echo "srun of a shell failed: $(cat "$dir/srun.log")" >&2; logs; exit 1; }
run "$acco" bench --collective allreduce,sendrecv --max-bytes 256KiB --iters 3 --warmup 1 --json \
  >"$out/collective.json" || { echo "srun acco bench --collective failed" >&2; logs; exit 1; }
run "$acco" schedule --distributed --devices host:2 --tiles 5 --tile-bytes 64KiB --time-scale 0.2 \
  --calibrate 0 --dispatch locality,round-robin --json >"$out/schedule.json" ||
  { echo "srun acco schedule --distributed failed" >&2; logs; exit 1; }
exit 0
