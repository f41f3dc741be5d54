// Catch2 2 (one header, catch2/catch.hpp) or Catch2 3 (a header per feature, Approx in namespace
// Catch): test files include this instead, so they compile against either.
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
#include <catch2/catch_approx.hpp>
#include <catch2/catch_test_macros.hpp>
using Catch::Approx;
#else
#include <catch2/catch.hpp>
#endif
