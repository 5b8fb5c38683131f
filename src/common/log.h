// Logging: spdlog to stderr (journald adds its own timestamps and levels, but running by hand
// wants them). Messages carry greppable key=value context: conn=, client=, api=, v=.
// Never log SASL bytes, passwords or tokens.
#pragma once

#include <spdlog/spdlog.h>

#include <string>

namespace kib::log {

// Sets the level ("trace".."off"); returns false for an unknown name.
bool set_level(const std::string& level);
void init(const std::string& level);

}  // namespace kib::log
