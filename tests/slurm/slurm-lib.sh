# A private Slurm for the tests (issue 36; ../shared/recipes facts): munged, slurmctld and one
# slurmd of this host, all under one scratch directory with their own socket, ports, state and
# logs; nothing read or written under /etc/slurm or /etc/munge, so it can sit beside a system
# Slurm. Source after ../lib.sh and nt_tmpdir.
#
#   nt_slurm_start        start it (skips with the reason where it cannot: not root, a package
#                         missing, a daemon that would not start); exports SLURM_CONF. With
#                         NT_SLURM_PLUGSTACK set, its text is the plugstack.conf (SPANK plugins)
#   nt_slurm_logs         the daemons' logs, for a failure's message
# It is stopped at exit (nt_on_exit).

# A TCP port nobody listens on.
nt_free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

nt_slurm_logs() {
	local f
	for f in "$SLURM_DIR"/munged.log "$SLURM_DIR"/slurmctld.log "$SLURM_DIR"/slurmd.log; do
		[ -f "$f" ] && { echo "--- $f"; tail -n 20 "$f"; }
	done
}

nt_slurm_stop() {
	local f pid
	for f in slurmd slurmctld munged; do
		pid=$(cat "$SLURM_DIR/$f.pid" 2>/dev/null) && kill "$pid" 2>/dev/null
	done
	for f in slurmd slurmctld munged; do
		pid=$(cat "$SLURM_DIR/$f.pid" 2>/dev/null) || continue
		for _ in $(seq 50); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -9 "$pid" 2>/dev/null
	done
}

nt_slurm_start() {
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
	local node host
	host=$(hostname -s)
	node=$(slurmd -C 2>/dev/null | head -n 1)
	[ "${node%% *}" = "NodeName=$host" ] || nt_skip "slurmd -C said '$node'"
	cat >"$SLURM_DIR/slurm.conf" <<EOF
ClusterName=nt
SlurmctldHost=$host(127.0.0.1)
AuthType=auth/munge
AuthInfo=socket=$SLURM_DIR/munge.sock
CredType=cred/munge
SlurmUser=root
SlurmctldPort=$(nt_free_port)
SlurmdPort=$(nt_free_port)
StateSaveLocation=$SLURM_DIR/state
SlurmdSpoolDir=$SLURM_DIR/spool
SlurmctldPidFile=$SLURM_DIR/slurmctld.pid
SlurmdPidFile=$SLURM_DIR/slurmd.pid
SlurmctldLogFile=$SLURM_DIR/slurmctld.log
SlurmdLogFile=$SLURM_DIR/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/affinity
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
KillWait=10
MailProg=/bin/true
ReturnToService=2
PlugStackConfig=$SLURM_DIR/plugstack.conf
$node NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
EOF
	printf '%s\n' "${NT_SLURM_PLUGSTACK:-}" >"$SLURM_DIR/plugstack.conf"
	export SLURM_CONF=$SLURM_DIR/slurm.conf
	slurmctld -f "$SLURM_CONF" -i 2>>"$SLURM_DIR/slurmctld.log" ||
		{ nt_slurm_logs; nt_skip "slurmctld would not start"; }
	slurmd -f "$SLURM_CONF" 2>>"$SLURM_DIR/slurmd.log" ||
		{ nt_slurm_logs; nt_skip "slurmd would not start"; }
	local state=
	for _ in $(seq 100); do
		state=$(sinfo -h -o '%t' 2>/dev/null)
		[ "$state" = idle ] && return 0
		sleep 0.2
	done
	nt_slurm_logs
	nt_skip "the private Slurm's node is '$state', not idle, after 20 s"
}
