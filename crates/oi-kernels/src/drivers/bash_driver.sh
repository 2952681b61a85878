# oi's shell kernel driver: runs each request in one bash process, so cd,
# variables, functions and exports persist between runs.
#
# Protocol (see oi-kernels/src/kernel.rs): a request is the run id and the
# code, each ended by a NUL byte, on fd 3; replies are JSON lines on fd 4.
# After each run a marker carrying a per-kernel token is written to stdout and
# stderr (through saved copies, fds 5 and 6) so the parent knows where the
# run's output ends. Control fds are closed while user code runs, so programs
# it starts cannot inherit them.
#
# The code is `source`d (from fd 7), not `eval`ed, so that an interrupt can
# stop it: the INT trap `return`s from the sourced code, which ends the run
# with status 130 and keeps the shell. The check in front of the code (on the
# same line, so line numbers in error messages stay right) catches an
# interrupt that lands between `started` and the start of the code.
__oi_token=$OI_KERNEL_TOKEN
unset OI_KERNEL_TOKEN
exec 5>&1 6>&2
__oi_in=
__oi_int=
trap '__oi_int=1; [ -n "$__oi_in" ] && return 130 2>/dev/null' INT
printf '{"type":"ready","pid":%d}\n' "$$" >&4
while IFS= read -r -d '' __oi_id <&3 && IFS= read -r -d '' __oi_code <&3; do
    __oi_int=
    __oi_in=1
    printf '{"type":"started","id":%s}\n' "$__oi_id" >&4
    source /dev/fd/7 7<<<"[ -z \"\$__oi_int\" ] || return 130; $__oi_code" 3<&- 4>&- 5>&- 6>&-
    __oi_rc=$?
    # An interrupt ends the run with 130, whatever `return` reported.
    [ -n "$__oi_int" ] && __oi_rc=130
    __oi_in=
    printf '\033]oi;%s;%s\007' "$__oi_token" "$__oi_id" >&5
    printf '\033]oi;%s;%s\007' "$__oi_token" "$__oi_id" >&6
    printf '{"type":"done","id":%s,"exit_code":%d}\n' "$__oi_id" "$__oi_rc" >&4
done
