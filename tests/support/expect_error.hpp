#pragma once
// Test support: checks that a call throws exactly the documented error type with a
// message that starts with the op name (the error contract of DESIGN.md), and that a
// session-entry refusal has the expected kind.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cxxabi.h>

#include <cstdlib>
#include <exception>
#include <memory>
#include <string>
#include <typeinfo>

#include "tenferro/tenferro.hpp"

namespace tenferro::testing {

/// The readable name of a mangled type name (`typeid(T).name()`); `n` itself if the ABI
/// cannot demangle it.
inline std::string demangle(const char* n) {
  int st = 0;
  std::unique_ptr<char, void (*)(void*)> p(abi::__cxa_demangle(n, nullptr, nullptr, &st), std::free);
  return st == 0 && p ? std::string(p.get()) : std::string(n);
}

/// Expects f() to throw exactly E (not a subclass, not another error) with a message
/// starting with "<prefix>: ". Returns what() of whatever std::exception was thrown
/// (empty if none), so a caller can check the rest of the message. Records a gtest
/// failure on a wrong type, a wrong prefix, or no exception; never throws.
template <class E, class F> std::string expect_error(F&& f, const std::string& prefix) {
  try {
    f();
  } catch (const std::exception& e) {
    if (typeid(e) != typeid(E)) {
      ADD_FAILURE() << "expected " << demangle(typeid(E).name()) << ", got " << demangle(typeid(e).name()) << ": " << e.what();
      return e.what();
    }
    EXPECT_THAT(std::string(e.what()), ::testing::StartsWith(prefix + ": "));
    return e.what();
  }
  ADD_FAILURE() << "expected " << demangle(typeid(E).name()) << ", nothing was thrown";
  return {};
}

/// The kind of the SessionEntryError f() throws (a gtest failure, and Executor, when it
/// throws none), for tests that compare kinds.
template <class F> SessionEntryKind entry_error_kind(F&& f) {
  try {
    f();
  } catch (const SessionEntryError& e) {
    return e.kind();
  }
  ADD_FAILURE() << "expected SessionEntryError";
  return SessionEntryKind::Executor;
}

/// Expects f() to throw SessionEntryError of `kind`; when `prefix` is not empty, also a
/// message starting with "<prefix>: ". Records a gtest failure otherwise; never throws.
template <class F> void expect_session_error(F&& f, SessionEntryKind kind, const std::string& prefix = "") {
  try {
    f();
  } catch (const SessionEntryError& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    if (!prefix.empty()) {
      EXPECT_THAT(std::string(e.what()), ::testing::StartsWith(prefix + ": "));
    }
    return;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected SessionEntryError, got " << demangle(typeid(e).name()) << ": " << e.what();
    return;
  }
  ADD_FAILURE() << "expected SessionEntryError, nothing was thrown";
}

}  // namespace tenferro::testing
