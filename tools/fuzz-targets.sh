# The libFuzzer targets of tests/fuzz and the longest input each reads; sourced by tools/fuzz.sh and
# tools/fuzz-device.sh.
# shellcheck shell=bash
all_targets=(packets rlnc_decoder peer_receiver rs_manifest rs_shards signed_table)

max_len() {
  case "$1" in
    packets) echo 1500 ;;
    rlnc_decoder | peer_receiver) echo 512 ;;
    rs_manifest) echo 4096 ;;
    rs_shards) echo 256 ;;
    signed_table) echo 4096 ;;
  esac
}
