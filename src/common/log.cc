#include "common/log.h"

#include <spdlog/sinks/stdout_color_sinks.h>

namespace kib::log {

bool set_level(const std::string& level) {
  auto lvl = spdlog::level::from_str(level);
  if (lvl == spdlog::level::off && level != "off") return false;
  spdlog::set_level(lvl);
  return true;
}

void init(const std::string& level) {
  auto logger = spdlog::stderr_color_mt("bridge");
  spdlog::set_default_logger(logger);
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");
  set_level(level);
  spdlog::flush_on(spdlog::level::warn);
}

}  // namespace kib::log
