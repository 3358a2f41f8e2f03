# The --isa option of the CPU benchmarks (sourced): `cap_isa avx2` makes every process started after it run this
# CPU's AVX2 code paths, in every library that dispatches by ISA: LibTorch's kernels (ATEN_CPU_CAPABILITY), oneDNN's
# (ONEDNN_MAX_CPU_ISA: kforge's projections and the peer's oneDNN ops), OpenBLAS's (OPENBLAS_CORETYPE=Haswell) and
# kforge's own (KFORGE_CPU_CAPABILITY). An AVX-512 machine then measures the code an AVX2-only CPU runs, not that
# CPU's clocks, caches or memory. `cap_isa native` leaves every library its widest.
cap_isa() {
  case "$1" in
    native) ;;
    avx2)
      export ATEN_CPU_CAPABILITY=avx2 ONEDNN_MAX_CPU_ISA=AVX2 OPENBLAS_CORETYPE=Haswell KFORGE_CPU_CAPABILITY=avx2
      ;;
    *) echo "--isa takes native or avx2, not '$1'" >&2; exit 2 ;;
  esac
}

# What cap_isa $1 leaves running, for the scripts' headers.
isa_cap_note() {
  [[ "$1" == avx2 ]] && echo "; capped to its AVX2 paths (--isa avx2: ATEN_CPU_CAPABILITY=avx2 ONEDNN_MAX_CPU_ISA=AVX2 OPENBLAS_CORETYPE=Haswell KFORGE_CPU_CAPABILITY=avx2)"
  return 0
}
