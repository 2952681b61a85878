# oi's zsh kernel driver: runs each request in one zsh process, so cd,
# variables, functions and exports persist between runs. Same protocol as
# the bash driver (bash_driver.sh): the run id and the code, each ended by a
# NUL byte, on fd 3; JSON lines on fd 4; markers on stdout and stderr.
__oi_token=$OI_KERNEL_TOKEN
unset OI_KERNEL_TOKEN
exec 5>&1 6>&2
__oi_in=
__oi_int=
trap '__oi_int=1; [[ -n $__oi_in ]] && return 130' INT
printf '{"type":"ready","pid":%d}\n' "$$" >&4
while IFS= read -r -d '' __oi_id <&3 && IFS= read -r -d '' __oi_code <&3; do
    __oi_int=
    __oi_in=1
    printf '{"type":"started","id":%s}\n' "$__oi_id" >&4
    source /dev/fd/7 7<<<"[[ -z \$__oi_int ]] || return 130; $__oi_code" 3<&- 4>&- 5>&- 6>&-
    __oi_rc=$?
    # An interrupt ends the run with 130, whatever `return` reported.
    [ -n "$__oi_int" ] && __oi_rc=130
    __oi_in=
    printf '\033]oi;%s;%s\007' "$__oi_token" "$__oi_id" >&5
    printf '\033]oi;%s;%s\007' "$__oi_token" "$__oi_id" >&6
    printf '{"type":"done","id":%s,"exit_code":%d}\n' "$__oi_id" "$__oi_rc" >&4
done
