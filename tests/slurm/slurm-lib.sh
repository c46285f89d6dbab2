# A private Slurm for the tests (issue 36; ../shared/recipes facts): munged, slurmctld and one
# slurmd of this host, all under one scratch directory with their own socket, ports, state and
# logs; nothing read or written under /etc/slurm or /etc/munge, so it can sit beside a system
# Slurm. Source after ../lib.sh and nt_tmpdir.
#
#   nt_slurm_start        start it (skips with the reason where it cannot: not root, a package
#                         missing, a daemon that would not start); exports SLURM_CONF. With
#                         NT_SLURM_PLUGSTACK set, its text is the plugstack.conf (SPANK plugins)
#   nt_slurm_start_hosts  a multi-node Slurm on the namespace hosts (tests/hosts/hosts-lib.sh)
#   nt_slurm_client CMD   a Slurm client command where the controller can be reached
#   nt_slurm_logs         the daemons' logs, for a failure's message
# It is stopped at exit (nt_on_exit).

# A TCP port nobody listens on.
nt_free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

nt_slurm_logs() {
	local f
	for f in "$SLURM_DIR"/munged.log "$SLURM_DIR"/slurmctld.log "$SLURM_DIR"/slurmd*.log; do
		[ -f "$f" ] && { echo "--- $f"; tail -n 20 "$f"; }
	done
}

nt_slurm_stop() {
	local f pid
	for f in "$SLURM_DIR"/slurmd*.pid "$SLURM_DIR"/slurmctld.pid "$SLURM_DIR"/munged.pid; do
		pid=$(cat "$f" 2>/dev/null) && kill "$pid" 2>/dev/null
	done
	for f in "$SLURM_DIR"/slurmd*.pid "$SLURM_DIR"/slurmctld.pid "$SLURM_DIR"/munged.pid; do
		pid=$(cat "$f" 2>/dev/null) || continue
		for _ in $(seq 50); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -9 "$pid" 2>/dev/null
	done
}

# nt_slurm_need: the preconditions (root, the packages), munged started, SLURM_DIR made.
nt_slurm_need() {
	[ "$(id -u)" = 0 ] || nt_skip "a private Slurm runs its daemons as root"
	local p
	for p in munged slurmctld slurmd srun sbatch scancel sinfo; do
		command -v "$p" >/dev/null || PATH=$PATH:/usr/sbin command -v "$p" >/dev/null ||
			nt_skip "no $p (apt-get install slurmd slurmctld slurm-client munge)"
	done
	export PATH=$PATH:/usr/sbin
	SLURM_DIR=$tmp/slurm
	mkdir -p "$SLURM_DIR/state" "$SLURM_DIR/spool"
	chmod 711 "$tmp" "$SLURM_DIR" # the socket's directories: world-executable
	nt_on_exit nt_slurm_stop
	head -c 1024 /dev/urandom >"$SLURM_DIR/munge.key"
	chmod 0400 "$SLURM_DIR/munge.key"
	munged --force --socket="$SLURM_DIR/munge.sock" --key-file="$SLURM_DIR/munge.key" \
		--pid-file="$SLURM_DIR/munged.pid" --seed-file="$SLURM_DIR/munge.seed" \
		--log-file="$SLURM_DIR/munged.log" 2>>"$SLURM_DIR/munged.log" ||
		{ nt_slurm_logs; nt_skip "munged would not start"; }
}

# nt_slurm_conf_common: slurm.conf's lines that every private Slurm shares.
nt_slurm_conf_common() {
	cat <<EOF
ClusterName=nt
AuthType=auth/munge
AuthInfo=socket=$SLURM_DIR/munge.sock
CredType=cred/munge
SlurmUser=root
StateSaveLocation=$SLURM_DIR/state
SlurmctldPidFile=$SLURM_DIR/slurmctld.pid
SlurmctldLogFile=$SLURM_DIR/slurmctld.log
ProctrackType=proctrack/linuxproc
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
KillWait=10
MailProg=/bin/true
ReturnToService=2
PlugStackConfig=$SLURM_DIR/plugstack.conf
EOF
}

# nt_slurm_client CMD...: a Slurm command where the controller can be reached (for the hosts'
# Slurm, in the first host's network namespace).
nt_slurm_client() { ${NT_SLURM_NET:+nsenter --net="$NT_SLURM_NET"} "$@"; }

# nt_slurm_wait_idle N: wait for N nodes to be idle (skips, with the daemons' logs, after 20 s).
nt_slurm_wait_idle() {
	local state=
	for _ in $(seq 100); do
		state=$(nt_slurm_client sinfo -h -N -o '%t' 2>/dev/null | sort | uniq -c | xargs)
		[ "$state" = "$1 idle" ] && return 0
		sleep 0.2
	done
	nt_slurm_logs
	nt_skip "the private Slurm's nodes are '$state', not $1 idle, after 20 s"
}

nt_slurm_start() {
	nt_slurm_need
	local node host
	host=$(hostname -s)
	node=$(slurmd -C 2>/dev/null | head -n 1)
	[ "${node%% *}" = "NodeName=$host" ] || nt_skip "slurmd -C said '$node'"
	{
		nt_slurm_conf_common
		cat <<EOF
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$(nt_free_port)
SlurmdPort=$(nt_free_port)
SlurmdSpoolDir=$SLURM_DIR/spool
SlurmdPidFile=$SLURM_DIR/slurmd.pid
SlurmdLogFile=$SLURM_DIR/slurmd.log
TaskPlugin=task/affinity
$node NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
EOF
	} >"$SLURM_DIR/slurm.conf"
	printf '%s\n' "${NT_SLURM_PLUGSTACK:-}" >"$SLURM_DIR/plugstack.conf"
	export SLURM_CONF=$SLURM_DIR/slurm.conf
	slurmctld -f "$SLURM_CONF" -i 2>>"$SLURM_DIR/slurmctld.log" ||
		{ nt_slurm_logs; nt_skip "slurmctld would not start"; }
	slurmd -f "$SLURM_CONF" 2>>"$SLURM_DIR/slurmd.log" ||
		{ nt_slurm_logs; nt_skip "slurmd would not start"; }
	nt_slurm_wait_idle 1
}

# nt_slurm_start_hosts: a multi-node Slurm on the namespace hosts of tests/hosts/hosts-lib.sh
# (NT_HOSTS, after nt_hosts_start): slurmctld on the first host, one slurmd -N HOST on each,
# each daemon in its host's network and UTS namespaces and a mount namespace of its own
# (nsenter, not ip netns exec, which would mount a sysfs without the cgroups slurmd wants)
# where the hosts file covers /etc/hosts and the host's own directory covers
# $SLURM_DIR/pmix (Slurm's PMIx plugin makes the same path on every node: one /tmp collides).
# Every host believes it has all the CPUs: task/none, no binding. Run srun and sbatch on a
# host ($NT_ON_HOST HOST srun ...).
nt_slurm_start_hosts() {
	nt_slurm_need
	local node h i nodes
	node=$(slurmd -C 2>/dev/null | head -n 1)
	case "$node" in NodeName=*) ;; *) nt_skip "slurmd -C said '$node'" ;; esac
	node=${node#NodeName=* }
	nodes=$(IFS=,; echo "${NT_HOSTS[*]}")
	{
		nt_slurm_conf_common
		echo "SlurmctldHost=${NT_HOSTS[0]}(10.77.0.1)"
		echo "SlurmctldPort=6817"
		echo "SlurmdPort=6818"
		echo "SlurmdSpoolDir=$SLURM_DIR/spool-%n"
		echo "SlurmdPidFile=$SLURM_DIR/slurmd-%n.pid"
		echo "SlurmdLogFile=$SLURM_DIR/slurmd-%n.log"
		echo "TaskPlugin=task/none"
		for ((i = 1; i <= ${#NT_HOSTS[@]}; i++)); do
			echo "NodeName=${NT_HOSTS[i - 1]} $node NodeAddr=10.77.0.$i State=UNKNOWN"
		done
		echo "PartitionName=debug Nodes=$nodes Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES"
	} >"$SLURM_DIR/slurm.conf"
	echo "PMIxCliTmpDirBase=$SLURM_DIR/pmix" >"$SLURM_DIR/mpi.conf"
	printf '%s\n' "${NT_SLURM_PLUGSTACK:-}" >"$SLURM_DIR/plugstack.conf"
	export SLURM_CONF=$SLURM_DIR/slurm.conf
	mkdir -p "$SLURM_DIR/pmix"
	# nt_slurm_on HOST CMD...: CMD as a daemon of HOST.
	nt_slurm_on() {
		local host=$1
		shift
		mkdir -p "$SLURM_DIR/pmix-$host" "$SLURM_DIR/spool-$host"
		nsenter --net="/run/netns/$host" unshare --uts --mount -- sh -c \
			'mount --bind "$1" /etc/hosts && mount --bind "$2" "$3" && hostname "$4" && shift 4 && exec "$@"' \
			sh "$tmp/hosts" "$SLURM_DIR/pmix-$host" "$SLURM_DIR/pmix" "$host" "$@"
	}
	nt_slurm_on "${NT_HOSTS[0]}" slurmctld -f "$SLURM_CONF" -i 2>>"$SLURM_DIR/slurmctld.log" ||
		{ nt_slurm_logs; nt_skip "slurmctld would not start on ${NT_HOSTS[0]}"; }
	for h in "${NT_HOSTS[@]}"; do
		nt_slurm_on "$h" slurmd -f "$SLURM_CONF" -N "$h" 2>>"$SLURM_DIR/slurmd-$h.log" ||
			{ nt_slurm_logs; nt_skip "slurmd would not start on $h"; }
	done
	NT_SLURM_NET=/run/netns/${NT_HOSTS[0]}
	nt_slurm_wait_idle ${#NT_HOSTS[@]}
}
