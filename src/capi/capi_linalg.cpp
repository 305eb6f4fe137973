// The C ABI's linear algebra: reduced SVD, reduced QR, Hermitian eigendecomposition
// and solve (tenferro/linalg.hpp). Multi-output calls check that their out-pointers
// are distinct and publish every result only after all handles are allocated.
#include "capi/capi_common.hpp"

#include "tenferro/linalg.hpp"

using namespace tenferro;
using namespace tenferro::capi;

tf_status tf_svd(tf_session* session, const tf_tensor* a, tf_tensor** u, tf_tensor** s, tf_tensor** vh) {
  return guard([&] {
    constexpr const char* op = "tf_svd";
    Session& ss = session_of(session, op);
    const Tensor& ta = tensor_of(a, op, "a");
    check_outputs({u, s, vh}, {"u", "s", "vh"}, op);
    SvdResult r = svd(ss, ta, SvdMode::thin);
    publish_all({u, s, vh}, {&r.U, &r.S, &r.Vh});
  });
}

tf_status tf_qr(tf_session* session, const tf_tensor* a, int positive_diagonal, tf_tensor** q, tf_tensor** r) {
  return guard([&] {
    constexpr const char* op = "tf_qr";
    Session& ss = session_of(session, op);
    const Tensor& ta = tensor_of(a, op, "a");
    check_outputs({q, r}, {"q", "r"}, op);
    QrResult res = qr(ss, ta, QrMode::reduced, positive_diagonal != 0);
    publish_all({q, r}, {&res.Q, &res.R});
  });
}

tf_status tf_eigh(tf_session* session, const tf_tensor* a, int upper, tf_tensor** w, tf_tensor** v) {
  return guard([&] {
    constexpr const char* op = "tf_eigh";
    Session& ss = session_of(session, op);
    const Tensor& ta = tensor_of(a, op, "a");
    check_outputs({w, v}, {"w", "v"}, op);
    EighResult res = eigh(ss, ta, upper != 0 ? Triangle::upper : Triangle::lower);
    publish_all({w, v}, {&res.W, &res.V});
  });
}

tf_status tf_solve(tf_session* session, const tf_tensor* a, const tf_tensor* b, tf_tensor** x) {
  return guard([&] {
    constexpr const char* op = "tf_solve";
    Session& ss = session_of(session, op);
    const Tensor& ta = tensor_of(a, op, "a");
    const Tensor& tb = tensor_of(b, op, "b");
    need(x, op, "x");
    publish(x, solve(ss, ta, tb));
  });
}
