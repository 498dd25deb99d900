#!/usr/bin/zsh -f
# SPDX-License-Identifier: GPL-2.0
#
# zsh-complete.zsh FPATH_DIR 'drmacct list --so'
#
# Types the words and two TABs into an interactive zsh (zsh/zpty) whose
# fpath starts with FPATH_DIR, and prints what the completion listed (the
# terminal's escapes removed): the zsh completion tested as a user meets it.
zmodload zsh/zpty || exit 1
dir=$1 words=$2
zpty -b z 'zsh -f -i'
zpty -w z "PS1='>'; fpath=($dir \$fpath); autoload -Uz compinit; compinit -u -D; print READY"
zpty -r z line '*READY*'
zpty -r z line '*READY*'
zpty -w -n z "$words"$'\t'
sleep 1
zpty -w -n z $'\t'
sleep 1
out=
while zpty -r -t z chunk; do out+=$chunk; done
zpty -d z
print -r -- "$out" | sed 's/\x1b\[[0-9;?]*[A-Za-z]//g; s/\r//g'
