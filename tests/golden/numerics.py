"""The pinned arithmetic of the golden record: environment variables torch and MKL read when they load (no imports here,
so the test can read them without loading torch into its own process)."""
NUMERICS = {'OMP_NUM_THREADS': '1', 'ATEN_CPU_CAPABILITY': 'default', 'MKL_CBWR': 'COMPATIBLE'}
