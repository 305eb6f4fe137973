// Stand-alone runner for the planning cases while bench_einsum.cpp is written on main;
// the lead deletes this file when merging (bench_einsum.cpp includes the cases).
//   build/release/bench/bench_einsum_plan
#include "einsum_plan_cases.hpp"

BENCHMARK_MAIN();
