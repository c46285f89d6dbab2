# Several hosts on one machine for the tests (issue 36; the facts in ../shared/recipes): each
# host a network namespace with a UTS namespace of its own (its hostname), joined by a bridge
# in a namespace of its own (so no interface appears in the machine's namespace), and an
# ssh stand-in that runs a command "on" a host: hydra's -launcher ssh -launcher-exec and Open
# MPI's plm_rsh_agent take it. Nothing is written under /etc: the hosts file is bind-mounted
# over /etc/hosts in the host's own mount namespace. Source after ../lib.sh and nt_tmpdir.
#
#   nt_hosts_start N   N hosts, named NT_HOSTS[0..N) (unique to this test run), addresses
#                      10.77.0.1.. on one /24; skips with the reason where it cannot (not root,
#                      no ip or unshare, namespaces refused)
#   nt_hosts_cpus HOST LIST   the CPUs the commands run on HOST are bound to (taskset)
#   $NT_ON_HOST HOST CMD...   run CMD on HOST (the ssh stand-in; ssh's options before HOST are
#                      skipped)
# The namespaces are removed at exit (nt_on_exit).

nt_hosts_stop() {
	local h
	for h in "${NT_HOSTS[@]}" "$NT_HOSTS_BRIDGE"; do
		ip netns del "$h" 2>/dev/null
	done
}

nt_hosts_start() {
	local n=$1 i h
	[ "$(id -u)" = 0 ] || nt_skip "network namespaces are root's"
	command -v ip >/dev/null || PATH=$PATH:/usr/sbin command -v ip >/dev/null ||
		nt_skip "no ip (apt-get install iproute2)"
	command -v unshare >/dev/null || nt_skip "no unshare (util-linux)"
	export PATH=$PATH:/usr/sbin
	local tag=nt$$
	NT_HOSTS=()
	for ((i = 1; i <= n; i++)); do NT_HOSTS+=("${tag}h$i"); done
	NT_HOSTS_BRIDGE=${tag}br
	nt_on_exit nt_hosts_stop
	ip netns add "$NT_HOSTS_BRIDGE" 2>"$tmp/hosts.err" ||
		nt_skip "network namespaces refused: $(cat "$tmp/hosts.err")"
	ip -n "$NT_HOSTS_BRIDGE" link add br0 type bridge &&
		ip -n "$NT_HOSTS_BRIDGE" link set br0 up || nt_skip "no bridge in a namespace"
	echo "127.0.0.1 localhost" >"$tmp/hosts"
	for ((i = 1; i <= n; i++)); do echo "10.77.0.$i ${NT_HOSTS[i - 1]}" >>"$tmp/hosts"; done
	for ((i = 1; i <= n; i++)); do
		h=${NT_HOSTS[i - 1]}
		ip netns add "$h" &&
			ip link add "v$h" type veth peer name e0 netns "$h" &&
			ip link set "v$h" netns "$NT_HOSTS_BRIDGE" &&
			ip -n "$NT_HOSTS_BRIDGE" link set "v$h" master br0 up &&
			ip -n "$h" addr add "10.77.0.$i/24" dev e0 &&
			ip -n "$h" link set e0 up && ip -n "$h" link set lo up ||
			nt_skip "could not make host $h"
	done
	NT_ON_HOST=$tmp/on-host
	cat >"$NT_ON_HOST" <<EOF
#!/bin/bash
# ssh stand-in: ssh's options, then HOST, then the command's words (joined, as ssh does).
while [[ \$# -gt 0 && \$1 == -* ]]; do
	case \$1 in -o | -p | -l | -i | -F) shift 2 ;; *) shift ;; esac
done
h=\$1
shift
cpus=\$(cat "$tmp/cpus-\$h" 2>/dev/null) || cpus=
exec \${cpus:+taskset -c "\$cpus"} ip netns exec "\$h" unshare --uts --mount -- sh -c \\
	'mount --bind "\$1" /etc/hosts && hostname "\$2" && shift 2 && eval "\$*"' sh "$tmp/hosts" "\$h" "\$*"
EOF
	chmod +x "$NT_ON_HOST"
	[ "$("$NT_ON_HOST" "${NT_HOSTS[0]}" hostname 2>&1)" = "${NT_HOSTS[0]}" ] ||
		nt_skip "a command on a host did not run there: $("$NT_ON_HOST" "${NT_HOSTS[0]}" hostname 2>&1)"
}

nt_hosts_cpus() { echo "$2" >"$tmp/cpus-$1"; }
