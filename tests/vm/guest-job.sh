# SPDX-License-Identifier: MIT
# shellcheck shell=sh
#
# Guest side of a tests/vm/run job, sourced by /init (busybox sh) from /job.sh; tests/vm/run
# appends the run_test / run_cmd calls. Uses from /init: mark (writes a protocol line to the
# results channel, fd 3), job_kmsg_check, job_rc.

# run_test IDX TIMEOUT WORKDIR CMD...   (CMD is usually `env K=V... /path/to/test args`)
# Runs one test in its own session with a watchdog, then sends
#   TEST-BEGIN IDX, the test's output, [TEST-KMSG IDX + new kernel messages], TEST-END IDX RC SECS TIMEDOUT KERNEL
run_test() {
	_idx=$1 _tmo=$2 _wd=$3
	shift 3
	job_kmsg_check >/dev/null 2>&1
	rm -f /tmp/test.out /tmp/timedout.$_idx
	read -r _t0 _ </proc/uptime
	(
		cd "$_wd" 2>/dev/null || { mkdir -p "$_wd" && cd "$_wd"; } || cd /
		exec setsid "$@"
	) </dev/null >/tmp/test.out 2>&1 3>&- &
	_pid=$!
	_wdog=
	if [ "$_tmo" -gt 0 ] 2>/dev/null; then
		(
			sleep "$_tmo"
			touch /tmp/timedout.$_idx
			kill -TERM -"$_pid" 2>/dev/null || kill -TERM "$_pid" 2>/dev/null
			sleep 5
			kill -KILL -"$_pid" 2>/dev/null || kill -KILL "$_pid" 2>/dev/null
		) &
		_wdog=$!
	fi
	wait "$_pid"
	_rc=$?
	[ -n "$_wdog" ] && kill "$_wdog" 2>/dev/null
	read -r _t1 _ </proc/uptime
	_timedout=0
	[ -e /tmp/timedout.$_idx ] && _timedout=1
	_kernel=0
	job_kmsg_check && _kernel=1

	mark "TEST-BEGIN $_idx"
	if [ -s /tmp/test.out ]; then
		cat /tmp/test.out >&3
		[ -n "$(tail -c 1 /tmp/test.out)" ] && echo >&3
	fi
	if [ $_kernel = 1 ]; then
		mark "TEST-KMSG $_idx"
		cat /tmp/kmsg.new >&3
	fi
	mark "TEST-END $_idx $_rc $(awk "BEGIN { printf \"%.2f\", $_t1 - $_t0 }") $_timedout $_kernel"
	case $_rc in 0 | 77) ;; *) job_rc=1 ;; esac
}

# run_cmd CWD CMD...: runs CMD with its output streamed to the results channel
run_cmd() {
	cd "$1" 2>/dev/null || cd /
	shift
	job_kmsg_check >/dev/null 2>&1
	mark "CMD-BEGIN"
	"$@" </dev/null >&3 2>&3 3>&-
	job_rc=$?
	mark "CMD-END $job_rc"
	cd /
}
