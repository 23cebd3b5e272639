// Numbers for people: "12.5%", "8.21G", "3.1 MiB".
#pragma once

#include <cstdint>
#include <string>

namespace ferry {

std::string Percent(double ratio);  // 0.125 -> "12.5%"
std::string HumanCount(double v);   // 8.21G, 231.2M, 12.0K, 640
std::string HumanBytes(int64_t b);  // 1.5 GiB, 3.1 MiB, 12.0 KiB, 640 B

}  // namespace ferry
