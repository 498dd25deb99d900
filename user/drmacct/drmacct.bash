# SPDX-License-Identifier: MIT
# bash completion for drmacct(1). Commands and options are read from the
# installed binary's own --help, so they are always those it takes.

_drmacct_help_opts()
{
	"$@" --help 2>/dev/null |
		grep -oE '(^|[ ,])--?[a-zA-Z][a-zA-Z0-9-]*' | tr -d ' ,' | sort -u
}

_drmacct()
{
	local cur prev cmd bin=${COMP_WORDS[0]}
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD - 1]}
	COMPREPLY=()
	# --opt=value: bash splits at '=', the option is before it
	if [[ $cur == "=" ]]; then
		cur=
	fi
	if [[ $prev == "=" ]] && ((COMP_CWORD >= 2)); then
		prev=${COMP_WORDS[COMP_CWORD - 2]}
	fi
	if ((COMP_CWORD == 1)); then
		local cmds
		cmds=$("$bin" --help 2>/dev/null |
			awk '/^Commands:/ { f = 1; next } f && /^  [a-z]/ { print $1 }')
		mapfile -t COMPREPLY < <(compgen -W "$cmds --help --version" -- "$cur")
		return
	fi
	cmd=${COMP_WORDS[1]}
	case $prev in
	-s | --sort)
		mapfile -t COMPREPLY < <(compgen -W "util mem pid id" -- "$cur")
		return ;;
	--spec)
		mapfile -t COMPREPLY < <(compgen -W "current 2022" -- "$cur")
		return ;;
	--source)
		mapfile -t COMPREPLY < <(compgen -W "auto bpf proc" -- "$cur")
		return ;;
	--attach)
		mapfile -t COMPREPLY < <(compgen -W "auto btf tracepoint" -- "$cur")
		return ;;
	-i | --interval | --duration)
		mapfile -t COMPREPLY < <(compgen -W "100ms 500ms 1s 2s 5s 1m" -- "$cur")
		return ;;
	--pid)
		mapfile -t COMPREPLY < <(compgen -W "$(cd /proc && echo [0-9]*)" -- "$cur")
		return ;;
	-d | --dir | --proc-root)
		mapfile -t COMPREPLY < <(compgen -d -- "$cur")
		return ;;
	-o | --output | -t | --trace-events | --device)
		mapfile -t COMPREPLY < <(compgen -f -- "$cur")
		return ;;
	-e | --engines | -n | --count | --tolerance | --ringbuf | -l | --listen)
		return ;;
	esac
	if [[ $cmd == bpf ]] && ((COMP_CWORD == 2)) && [[ $cur != -* ]]; then
		mapfile -t COMPREPLY < <(compgen -W "start stop status dump" -- "$cur")
		return
	fi
	if [[ $cur == -* ]]; then
		local args=("$bin" "$cmd") w
		# bpf SUBCOMMAND: that subcommand's options only
		if [[ $cmd == bpf ]]; then
			for w in "${COMP_WORDS[@]:2:COMP_CWORD-2}"; do
				case $w in
				start | stop | status | dump) args+=("$w"); break ;;
				esac
			done
		fi
		mapfile -t COMPREPLY < <(compgen -W "$(_drmacct_help_opts "${args[@]}")" -- "$cur")
		return
	fi
	case $cmd in
	validate | report)
		mapfile -t COMPREPLY < <(compgen -f -- "$cur") ;;
	stat | record)
		mapfile -t COMPREPLY < <(compgen -c -- "$cur") ;;
	esac
}
complete -F _drmacct drmacct
