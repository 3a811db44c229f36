#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# scripts/guest-test-key.sh KEY: the ssh key pair the test command's guest
# is made with (make-guest.sh --ssh-key KEY.pub) and logged in to with
# (the guest-disk scenario's ssh, with KEY): made with ssh-keygen, ed25519,
# no passphrase, anew (an old pair is replaced). A test's key, no secret:
# the guest it opens runs nested, on a network of L1's own.
set -eu
key=${1:?usage: guest-test-key.sh KEY}
command -v ssh-keygen >/dev/null ||
    { echo "guest-test-key.sh: no ssh-keygen: apt-get install openssh-client (or scripts/install-deps.sh)" >&2; exit 2; }
rm -f "$key" "$key.pub"
ssh-keygen -q -t ed25519 -N '' -C kvmmio-guest-test -f "$key"
