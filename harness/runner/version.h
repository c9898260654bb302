#pragma once
namespace locklab {
inline constexpr const char* kVersion = "0.1.0";
}
