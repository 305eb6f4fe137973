// distributed_einsum under mpiexec (ctest runs this program on 1, 2, 3 and 4 ranks).
// Every test is collective: all ranks run the same tests in the same order and make
// the same calls. Results are compared with the single-process einsum on the same
// operands (generated from the same seed on every rank), at <= 1e-12 relative for
// f64/c128; errors must be the same type and message on every rank, and never hang
// (ctest's TIMEOUT turns a hang into a failure).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <cstdio>
#include <complex>
#include <cstring>
#include <string>
#include <vector>

#include "support/expect_error.hpp"
#include "tenferro/mpi.hpp"
#include "tenferro/tenferro.hpp"

namespace {

using namespace tenferro;
using tenferro::mpi::DistributedInfo;
using tenferro::mpi::DistributedOptions;
using tenferro::mpi::OperandSource;
using tenferro::mpi::Reduction;
using tenferro::testing::expect_error;

int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
int world_size() {
  int n = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

CpuBackend& backend() {
  static CpuBackend b([] {
    CpuBackendOptions o;
    o.num_threads = 1;  // up to 4 ranks share 2 cores
    return o;
  }());
  return b;
}

// A label as a UTF-8 code point: a-z, A-Z, then U+0100 onwards.
std::string label(int l) {
  if (l < 26) return std::string(1, static_cast<char>('a' + l));
  if (l < 52) return std::string(1, static_cast<char>('A' + l - 26));
  const unsigned cp = 0x100u + static_cast<unsigned>(l - 52);
  return {static_cast<char>(0xC0 | (cp >> 6)), static_cast<char>(0x80 | (cp & 0x3F))};
}

struct Network {
  std::string subscripts;
  std::vector<std::vector<std::int64_t>> shapes;
};

// The norm network of an lx×ly PEPS of bond D (ket and bra, physical legs of extent d
// summed), with `open` physical legs of the first sites kept in the output.
Network peps(int lx, int ly, std::int64_t D, std::int64_t d, int open = 0) {
  int next = 0;
  std::vector<std::vector<int>> ket(static_cast<std::size_t>(lx * ly)), bra(ket.size());
  std::vector<std::int64_t> ext;
  std::string out;
  auto site = [&](int x, int y) { return static_cast<std::size_t>(y * lx + x); };
  for (int y = 0; y < ly; ++y)
    for (int x = 0; x < lx; ++x) {
      const int p = next++;
      ext.push_back(d);
      if (static_cast<int>(site(x, y)) < open) {
        const int q = next++;  // open legs: ket and bra keep their own physical label
        ext.push_back(d);
        ket[site(x, y)].push_back(p), bra[site(x, y)].push_back(q);
        out += label(p) + label(q);
      } else {
        ket[site(x, y)].push_back(p), bra[site(x, y)].push_back(p);
      }
      for (int dir = 0; dir < 2; ++dir) {
        const int nx = x + (dir == 0), ny = y + (dir == 1);
        if (nx >= lx || ny >= ly) continue;
        const int k = next++, b = next++;
        ext.push_back(D), ext.push_back(D);
        ket[site(x, y)].push_back(k), ket[site(nx, ny)].push_back(k);
        bra[site(x, y)].push_back(b), bra[site(nx, ny)].push_back(b);
      }
    }
  Network n;
  for (const auto* side : {&ket, &bra})
    for (const auto& t : *side) {
      if (!n.subscripts.empty()) n.subscripts += ",";
      std::vector<std::int64_t> shape;
      for (int l : t) n.subscripts += label(l), shape.push_back(ext[static_cast<std::size_t>(l)]);
      n.shapes.push_back(shape);
    }
  n.subscripts += "->" + out;
  return n;
}

std::vector<Tensor> operands(const Network& n, DType dt, std::uint64_t seed) {
  Generator gen(seed);
  std::vector<Tensor> ops;
  for (const auto& sh : n.shapes) ops.push_back(Tensor::normal(gen, sh, dt));
  return ops;
}

template <class T> double rel_error_t(const Tensor& a, const Tensor& b) {
  const T* x = a.data_ptr<T>();
  const T* y = b.data_ptr<T>();
  double diff = 0, scale = 0;
  for (std::int64_t i = 0; i < a.numel(); ++i) {
    diff = std::max(diff, static_cast<double>(std::abs(x[i] - y[i])));
    scale = std::max(scale, static_cast<double>(std::abs(y[i])));
  }
  return scale > 0 ? diff / scale : diff;
}

// max |a - b| / max |b| over compact tensors of the same shape and dtype.
double rel_error(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(a.dtype(), b.dtype());
  EXPECT_EQ(a.numel(), b.numel());
  switch (a.dtype()) {
    case DType::f32: return rel_error_t<float>(a, b);
    case DType::f64: return rel_error_t<double>(a, b);
    case DType::c64: return rel_error_t<c64>(a, b);
    case DType::c128: return rel_error_t<c128>(a, b);
    default: return INFINITY;
  }
}

std::uint64_t hash_bytes(const void* p, std::size_t n) {
  std::uint64_t h = 1469598103934665603ull;
  for (std::size_t i = 0; i < n; ++i) h = (h ^ static_cast<const unsigned char*>(p)[i]) * 1099511628211ull;
  return h;
}
std::uint64_t hash_tensor(const Tensor& t) { return hash_bytes(t.data(), static_cast<std::size_t>(t.numel()) * dtype_size(t.dtype())); }
std::uint64_t hash_string(const std::string& s) { return hash_bytes(s.data(), s.size()); }

// True when `h` is the same on every rank.
bool same_everywhere(std::uint64_t h) {
  std::uint64_t lo = 0, hi = 0;
  MPI_Allreduce(&h, &lo, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&h, &hi, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
  return lo == hi;
}

DistributedOptions sliced(double max_elements) {
  DistributedOptions o;
  o.einsum.plan.max_intermediate_elements = max_elements;
  return o;
}

struct Case {
  const char* name;
  Network net;
  DType dtype;
  double limit;
  double tolerance;
};

std::vector<Case> cases() {
  return {
      {"peps3x3_f64_closed", peps(3, 3, 3, 2), DType::f64, 200, 1e-12},
      {"peps3x3_c128_closed", peps(3, 3, 3, 2), DType::c128, 200, 1e-12},
      {"peps3x2_c128_open", peps(3, 2, 3, 2, 2), DType::c128, 100, 1e-12},
      {"peps3x2_f64_open", peps(3, 2, 3, 2, 2), DType::f64, 100, 1e-12},
      {"peps3x2_f32_open", peps(3, 2, 3, 2, 2), DType::f32, 100, 1e-5},
      {"peps3x2_c64_open", peps(3, 2, 3, 2, 2), DType::c64, 100, 1e-5},
  };
}

// Every case, both operand sources and both reductions: the result matches einsum.
TEST(DistributedEinsum, MatchesSingleProcessEinsum) {
  HeldSession s = backend().open_session();
  const int P = world_size(), me = world_rank();
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    const std::vector<Tensor> ops = operands(c.net, c.dtype, 7);
    const Tensor ref = einsum(s, c.net.subscripts, ops);
    for (OperandSource src : {OperandSource::every_rank, OperandSource::broadcast}) {
      for (Reduction red : {Reduction::all, Reduction::root}) {
        DistributedOptions o = sliced(c.limit);
        o.operands = src;
        o.reduction = red;
        o.root = P - 1;
        DistributedInfo info;
        // With broadcast operands, ranks other than 0 pass none.
        const std::span<const Tensor> mine = src == OperandSource::broadcast && me != 0 ? std::span<const Tensor>() : ops;
        const Tensor r = mpi::distributed_einsum(s, MPI_COMM_WORLD, c.net.subscripts, mine, o, &info);
        ASSERT_GT(info.num_slices, 1) << "the memory limit must force slicing";
        EXPECT_EQ(info.num_ranks, P);
        EXPECT_EQ(info.path.sliced.size() > 0, true);
        if (red == Reduction::all || me == o.root) {
          ASSERT_TRUE(r.defined());
          EXPECT_LE(rel_error(r, ref), c.tolerance);
        } else {
          EXPECT_FALSE(r.defined());
        }
        if (red == Reduction::all) {
          EXPECT_TRUE(same_everywhere(hash_tensor(r))) << "ranks hold different bits";
        }
      }
    }
  }
}

// The result is the same bits on every run with the same rank count, and the slices
// are spread by the (round-robin) LPT assignment.
TEST(DistributedEinsum, DeterministicAndAssignedRoundRobin) {
  HeldSession s = backend().open_session();
  const Case c = cases()[1];
  const std::vector<Tensor> ops = operands(c.net, c.dtype, 11);
  DistributedInfo info;
  const Tensor a = mpi::distributed_einsum(s, MPI_COMM_WORLD, c.net.subscripts, ops, sliced(c.limit), &info);
  const Tensor b = mpi::distributed_einsum(s, MPI_COMM_WORLD, c.net.subscripts, ops, sliced(c.limit));
  EXPECT_EQ(hash_tensor(a), hash_tensor(b));
  for (std::int64_t k : info.slices) EXPECT_EQ(k % info.num_ranks, info.rank);
  EXPECT_EQ(static_cast<std::int64_t>(info.slices.size()), (info.num_slices - info.rank + info.num_ranks - 1) / info.num_ranks);
  EXPECT_GT(info.slice_seconds, 0);
  // Every rank ran the identical plan: rank 0's tree.
  std::string tree;
  for (auto [x, y] : info.path.tree.steps) tree += std::to_string(x) + "," + std::to_string(y) + ";";
  EXPECT_TRUE(same_everywhere(hash_string(tree)));
}

// Two slices (a sliced output label) on up to four ranks: ranks without a slice add zeros.
TEST(DistributedEinsum, MoreRanksThanSlices) {
  HeldSession s = backend().open_session();
  Generator gen(3);
  const std::vector<Tensor> ops{Tensor::normal(gen, {4, 4}, DType::f64), Tensor::normal(gen, {4, 4}, DType::f64)};
  const Tensor ref = einsum(s, "ij,jk->ik", ops);
  DistributedInfo info;
  const Tensor r = mpi::distributed_einsum(s, MPI_COMM_WORLD, "ij,jk->ik", ops, sliced(8), &info);
  EXPECT_EQ(info.num_slices, 2);
  EXPECT_LE(rel_error(r, ref), 1e-12);
  // And without slicing at all: one slice, on rank 0.
  const Tensor u = mpi::distributed_einsum(s, MPI_COMM_WORLD, "ij,jk->ik", ops, {}, &info);
  EXPECT_EQ(info.num_slices, 1);
  EXPECT_LE(rel_error(u, ref), 1e-12);
}

// Strided operands (a transposed view) broadcast from rank 0, on a sub-communicator
// (even and odd ranks contract apart, at the same time).
TEST(DistributedEinsum, StridedBroadcastOperandsOnASubCommunicator) {
  HeldSession s = backend().open_session();
  const int me = world_rank();
  MPI_Comm half = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &half);
  Generator gen(static_cast<std::uint64_t>(10 + me % 2));  // the halves contract different data
  const Tensor a = Tensor::normal(gen, {5, 6}, DType::c128).transpose_view(0, 1);  // [6, 5], strided
  const Tensor b = Tensor::normal(gen, {5, 4, 3}, DType::c128);
  const std::vector<Tensor> ops{a, b};
  const Tensor ref = einsum(s, "ij,jkl->ikl", ops);
  DistributedOptions o = sliced(20);
  o.operands = OperandSource::broadcast;
  int hr = 0;
  MPI_Comm_rank(half, &hr);
  DistributedInfo info;
  const Tensor r = mpi::distributed_einsum(s, half, "ij,jkl->ikl", hr == 0 ? std::span<const Tensor>(ops) : std::span<const Tensor>(), o, &info);
  EXPECT_GT(info.num_slices, 1);
  EXPECT_LE(rel_error(r, ref), 1e-12);
  MPI_Comm_free(&half);
}

// _into on the receiving rank; the other ranks' out is never written.
TEST(DistributedEinsum, IntoRootOnlyLeavesOtherRanksUntouched) {
  HeldSession s = backend().open_session();
  const int P = world_size(), me = world_rank();
  const Case c = cases()[2];
  const std::vector<Tensor> ops = operands(c.net, c.dtype, 5);
  const Tensor ref = einsum(s, c.net.subscripts, ops);
  const Tensor out = Tensor::full(ref.shape(), Scalar(c128(-7.0, 3.0)), DType::c128);
  const Tensor view = out.transpose_view(0, 1);  // a strided out on the root (extents all 2)
  DistributedOptions o = sliced(c.limit);
  o.reduction = Reduction::root;
  o.root = P / 2;
  mpi::distributed_einsum_into(s, MPI_COMM_WORLD, c.net.subscripts, ops, me == o.root ? view : out, o);
  if (me == o.root) {
    EXPECT_LE(rel_error(to_contiguous(s, view), ref), 1e-12);
  } else {
    for (std::int64_t i = 0; i < out.numel(); ++i) EXPECT_EQ(out.data_ptr<c128>()[i], c128(-7.0, 3.0));
  }
  // A wrong out on the receiving rank fails every rank before any slice runs.
  const Tensor bad = Tensor::zeros({1}, DType::c128);
  const std::string m = expect_error<ShapeError>(
      [&] { mpi::distributed_einsum_into(s, MPI_COMM_WORLD, c.net.subscripts, ops, me == o.root ? bad : out, o); },
      "distributed_einsum");
  EXPECT_THAT(m, ::testing::HasSubstr("out has shape [1] c128, the result's shape is [2,2,2,2]"));
  EXPECT_TRUE(same_everywhere(hash_string(m)));
}

// A typed error in one rank's slice: every rank throws the same type and message.
TEST(DistributedEinsum, FailingRankFailsEveryRankWithTheSameError) {
  HeldSession s = backend().open_session();
  const int P = world_size();
  const Case c = cases()[0];
  const std::vector<Tensor> ops = operands(c.net, c.dtype, 1);
  DistributedOptions o = sliced(c.limit);
  const int victim = P - 1;
  o.before_slice = [&](std::int64_t slice) {
    if (world_rank() == victim) throw NumericalError("test_hook", "slice " + std::to_string(slice) + " failed", 42, 3);
  };
  std::string what;
  try {
    mpi::distributed_einsum(s, MPI_COMM_WORLD, c.net.subscripts, ops, o);
    ADD_FAILURE() << "no error";
  } catch (const NumericalError& e) {
    what = e.what();
    EXPECT_EQ(e.info(), 42);
    EXPECT_EQ(e.batch_index(), 3);
  }
  EXPECT_THAT(what, ::testing::StartsWith("distributed_einsum: rank " + std::to_string(victim) + " of " + std::to_string(P) +
                                          ": test_hook: slice "));
  EXPECT_TRUE(same_everywhere(hash_string(what)));
  // Any other exception becomes tenferro::Error, the same on every rank.
  o.before_slice = [&](std::int64_t) {
    if (world_rank() == 0) throw std::runtime_error("plain failure");
  };
  const std::string m = expect_error<Error>([&] { mpi::distributed_einsum(s, MPI_COMM_WORLD, c.net.subscripts, ops, o); },
                                                     "distributed_einsum");
  EXPECT_THAT(m, ::testing::HasSubstr("rank 0 of"));
  EXPECT_THAT(m, ::testing::HasSubstr("plain failure"));
  // The communicator is still usable afterwards.
  o.before_slice = nullptr;
  EXPECT_LE(rel_error(mpi::distributed_einsum(s, MPI_COMM_WORLD, c.net.subscripts, ops, o), einsum(s, c.net.subscripts, ops)), 1e-12);
}

// A planning error on rank 0 (bad subscripts, the same everywhere) is agreed too.
TEST(DistributedEinsum, EinsumErrorsAreTheSameOnEveryRank) {
  HeldSession s = backend().open_session();
  Generator gen(2);
  const std::vector<Tensor> ops{Tensor::normal(gen, {2, 3}, DType::f64), Tensor::normal(gen, {4, 5}, DType::f64)};
  const std::string m = expect_error<ShapeError>(
      [&] { mpi::distributed_einsum(s, MPI_COMM_WORLD, "ij,jk->ik", ops); }, "distributed_einsum");
  EXPECT_THAT(m, ::testing::HasSubstr("rank 0 of"));
  EXPECT_TRUE(same_everywhere(hash_string(m)));
  // A memory limit that cannot be met.
  const std::vector<Tensor> sq{Tensor::normal(gen, {4, 4}, DType::f64), Tensor::normal(gen, {4, 4}, DType::f64)};
  expect_error<ArgumentError>([&] { mpi::distributed_einsum(s, MPI_COMM_WORLD, "ij,jk->ik", sq, sliced(0.5)); },
                                       "distributed_einsum");
  // A root outside the communicator.
  DistributedOptions o;
  o.reduction = Reduction::root;
  o.root = world_size();
  expect_error<ArgumentError>([&] { mpi::distributed_einsum(s, MPI_COMM_WORLD, "ij,jk->ik", sq, o); }, "distributed_einsum");
}

// Different shapes or subscripts on one rank: ArgumentError on every rank, naming both.
TEST(DistributedEinsum, MismatchedInputsAreDetected) {
  const int P = world_size(), me = world_rank();
  if (P < 2) GTEST_SKIP() << "needs two ranks";
  HeldSession s = backend().open_session();
  Generator gen(4);
  const std::int64_t k = me == P - 1 ? 5 : 4;
  const std::vector<Tensor> ops{Tensor::normal(gen, {4, k}, DType::f64), Tensor::normal(gen, {k, 4}, DType::f64)};
  std::string m = expect_error<ArgumentError>(
      [&] { mpi::distributed_einsum(s, MPI_COMM_WORLD, "ij,jk->ik", ops, sliced(8)); }, "distributed_einsum");
  EXPECT_THAT(m, ::testing::HasSubstr("inputs differ across ranks: rank " + std::to_string(P - 1) + " has"));
  EXPECT_THAT(m, ::testing::HasSubstr("[4,5] f64"));
  EXPECT_TRUE(same_everywhere(hash_string(m)));
  // Different subscripts with broadcast operands.
  DistributedOptions o;
  o.operands = OperandSource::broadcast;
  m = expect_error<ArgumentError>(
      [&] { mpi::distributed_einsum(s, MPI_COMM_WORLD, me == 1 ? "ij,jk->ki" : "ij,jk->ik", ops, o); }, "distributed_einsum");
  EXPECT_THAT(m, ::testing::HasSubstr("rank 1 has subscripts \"ij,jk->ki\""));
  // Different options (memory limit).
  const std::vector<Tensor> sq{Tensor::normal(gen, {4, 4}, DType::f64), Tensor::normal(gen, {4, 4}, DType::f64)};
  expect_error<ArgumentError>(
      [&] { mpi::distributed_einsum(s, MPI_COMM_WORLD, "ij,jk->ik", sq, sliced(me == 0 ? 8 : 0)); }, "distributed_einsum");
}

// ---- scheduling (pure functions) ----

TEST(AssignSlices, LongestProcessingTimeFirst) {
  // Graham's worst case for 3 ranks: LPT gives 11, the optimum is 9 (5+4, 5+4, 3+3+3).
  const std::vector<double> t{3, 5, 3, 4, 5, 3, 4};
  const mpi::SliceAssignment a = mpi::assign_slices(t, 3);
  EXPECT_DOUBLE_EQ(a.makespan, 11);
  EXPECT_EQ(a.owner, (std::vector<int>{0, 0, 1, 2, 1, 0, 2}));
  EXPECT_DOUBLE_EQ(a.mean, 9);
  // Equal times: round robin, and ranks without slices.
  const mpi::SliceAssignment rr = mpi::assign_slices(std::vector<double>(5, 1.0), 8);
  EXPECT_EQ(rr.owner, (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_DOUBLE_EQ(rr.makespan, 1);
  expect_error<ArgumentError>([] { mpi::assign_slices(std::vector<double>{1}, 0); }, "assign_slices");
  expect_error<ArgumentError>([] { mpi::assign_slices(std::vector<double>{-1}, 2); }, "assign_slices");
}

TEST(AssignSlices, SimulationCountsTheReductionMessages) {
  const std::vector<double> t(1024, 1e-3);
  const mpi::ScheduleEstimate e = mpi::simulate_schedule(t, 64, 0, 0, Reduction::root, {0, 1e10});
  EXPECT_NEAR(e.efficiency, 1.0, 1e-12);
  EXPECT_NEAR(e.compute_makespan, 16e-3, 1e-15);
  // Reduce of 8-byte results on 4 ranks: rank 0 receives 2, rank 2 receives 1 and sends
  // 1, ranks 1 and 3 send 1: max 16 bytes, mean 12.
  const mpi::ScheduleEstimate f = mpi::simulate_schedule(t, 4, 8, 0, Reduction::root);
  EXPECT_DOUBLE_EQ(f.max_bytes_per_rank, 16);
  EXPECT_DOUBLE_EQ(f.mean_bytes_per_rank, 12);
  expect_error<ArgumentError>([&] { mpi::simulate_schedule(t, 4, -1, 0, Reduction::all); }, "simulate_schedule");
}

// Prints a rank's failed assertions (ranks other than 0 replace gtest's report by it).
class FailurePrinter : public ::testing::EmptyTestEventListener {
 public:
  explicit FailurePrinter(int rank) : rank_(rank) {}
  void OnTestPartResult(const ::testing::TestPartResult& r) override {
    if (r.failed())
      std::printf("[rank %d] %s:%d: Failure\n%s\n", rank_, r.file_name() ? r.file_name() : "?", r.line_number(), r.summary());
  }

 private:
  int rank_;
};

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  ::testing::InitGoogleTest(&argc, argv);
  // Only rank 0 prints the usual report; other ranks print their failures only.
  if (world_rank() != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new FailurePrinter(world_rank()));
  }
  int failed = RUN_ALL_TESTS() != 0 ? 1 : 0, any = 0;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return any;
}
