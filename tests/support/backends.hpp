#pragma once
// Runs a test body once per backend compiled into this build (issue 11 §6): the CPU
// backend always; a device backend joins the list when its session class lands (the
// CUDA build switch today compiles a kernel table of stubs and no session, so there is
// nothing to open on it yet). A body receives the backend's name for SCOPED_TRACE and a
// held session, and tests what `supports` promises: where it answers false the op must
// throw UnsupportedError naming the op and the device, never run.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "tenferro/tenferro.hpp"

namespace tenferro::testing {

/// One compiled backend: its device kind, its name, and a way to hold a session on it.
struct BackendUnderTest {
  DeviceKind device;
  std::string name;
  std::function<void(const std::function<void(Session&)>&)> with_session;
};

/// Every backend of this build (one thread each, so results do not depend on the
/// machine's core count).
inline const std::vector<BackendUnderTest>& compiled_backends() {
  static const std::vector<BackendUnderTest> list = [] {
    std::vector<BackendUnderTest> v;
    v.push_back({DeviceKind::cpu, "cpu", [](const std::function<void(Session&)>& body) {
                   static CpuBackend backend([] {
                     CpuBackendOptions o;
                     o.num_threads = 1;
                     return o;
                   }());
                   HeldSession s = backend.open_session();
                   body(s);
                 }});
    return v;
  }();
  return list;
}

/// A process-wide CPU backend of one thread (results independent of the core count).
inline CpuBackend& one_thread_backend() {
  static CpuBackend b([] {
    CpuBackendOptions o;
    o.num_threads = 1;
    return o;
  }());
  return b;
}

/// body(backend, session) once per compiled backend, under a SCOPED_TRACE of its name.
inline void for_each_backend(const std::function<void(const BackendUnderTest&, Session&)>& body) {
  for (const BackendUnderTest& b : compiled_backends()) {
    SCOPED_TRACE("backend " + b.name);
    b.with_session([&](Session& s) { body(b, s); });
  }
}

}  // namespace tenferro::testing
