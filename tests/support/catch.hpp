// SPDX-License-Identifier: MIT
// Catch2 2 (one header, catch2/catch.hpp) or Catch2 3 (a header per feature, Approx in namespace
// Catch): test files include this instead, so they compile against either. Tests write Approx,
// Catch::Contains and Catch::StartsWith (Catch2 2's spellings); add here what else they come to use.
#pragma once

// CMake names the version it found; without it (an editor's parse), whichever headers exist.
#if !defined(TENET_CATCH2_MAJOR)
#if __has_include(<catch2/catch_test_macros.hpp>)
#define TENET_CATCH2_MAJOR 3
#else
#define TENET_CATCH2_MAJOR 2
#endif
#endif

#if TENET_CATCH2_MAJOR >= 3
#include <string>

#include <catch2/catch_approx.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>  // also CHECK_THAT and CHECK_THROWS_WITH
using Catch::Approx;
// Catch2 2's names for the string matchers the tests use (3 renamed Contains to ContainsSubstring
// and keeps both in Catch::Matchers only).
namespace Catch {
inline Matchers::StringContainsMatcher Contains(const std::string& text) { return Matchers::ContainsSubstring(text); }
using Matchers::StartsWith;
}  // namespace Catch
#else
#include <catch2/catch.hpp>
#endif

namespace tenet::testing {
/// Equal up to rounding: what a time computed two ways must be.
inline Approx exactly(double value) { return Approx(value).epsilon(1e-9).margin(0.0); }
}  // namespace tenet::testing
