// Outside consumer of an installed tenferro::mpi, run as an MPI singleton (one rank).
#include <tenferro/mpi.hpp>
#include <tenferro/tenferro.hpp>

#include <cstdio>
#include <exception>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rc = 0;
  try {
    tenferro::CpuBackend backend;
    tenferro::HeldSession s = backend.open_session();
    const auto a = tenferro::Tensor::ones({4, 4}, tenferro::DType::f64);
    tenferro::mpi::DistributedOptions o;
    o.einsum.plan.max_intermediate_elements = 8;  // two slices
    const tenferro::Tensor c = tenferro::mpi::distributed_einsum(s, MPI_COMM_WORLD, "ij,jk->ik", {a, a}, o);
    if (c.item<double>({1, 2}) != 4.0) {
      std::fprintf(stderr, "consumer_mpi: c(1,2) = %g, expected 4\n", c.item<double>({1, 2}));
      rc = 1;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "consumer_mpi: exception: %s\n", e.what());
    rc = 1;
  }
  MPI_Finalize();
  return rc;
}
