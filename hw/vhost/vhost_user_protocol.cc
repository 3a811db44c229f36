// SPDX-License-Identifier: BSD-2-Clause
// The checked reader of a vhost-user backend's replies.
#include "kvmmio/vhost/vhost_user_protocol.h"

#include <cstdio>
#include <cstring>

namespace kvmmio::vhost::user {

const char* to_string(Request request) {
  switch (request) {
    case Request::kGetFeatures: return "GET_FEATURES";
    case Request::kSetFeatures: return "SET_FEATURES";
    case Request::kSetOwner: return "SET_OWNER";
    case Request::kResetOwner: return "RESET_OWNER";
    case Request::kSetMemTable: return "SET_MEM_TABLE";
    case Request::kSetVringNum: return "SET_VRING_NUM";
    case Request::kSetVringAddr: return "SET_VRING_ADDR";
    case Request::kSetVringBase: return "SET_VRING_BASE";
    case Request::kGetVringBase: return "GET_VRING_BASE";
    case Request::kSetVringKick: return "SET_VRING_KICK";
    case Request::kSetVringCall: return "SET_VRING_CALL";
    case Request::kSetVringErr: return "SET_VRING_ERR";
    case Request::kGetProtocolFeatures: return "GET_PROTOCOL_FEATURES";
    case Request::kSetProtocolFeatures: return "SET_PROTOCOL_FEATURES";
    case Request::kGetQueueNum: return "GET_QUEUE_NUM";
    case Request::kSetVringEnable: return "SET_VRING_ENABLE";
    case Request::kGetConfig: return "GET_CONFIG";
  }
  return "an unknown request";
}

std::optional<uint32_t> reply_size(const Awaited& awaited) {
  if (awaited.ack) return sizeof(uint64_t);
  switch (awaited.request) {
    case Request::kGetFeatures:
    case Request::kGetProtocolFeatures:
    case Request::kGetQueueNum:
      return sizeof(uint64_t);
    case Request::kGetVringBase:
      return sizeof(VringState);
    case Request::kGetConfig:
      if (awaited.config_size > kMaxConfigSize) return std::nullopt;
      return static_cast<uint32_t>(sizeof(ConfigHeader)) + awaited.config_size;
    default:
      return std::nullopt;
  }
}

namespace {

std::string text(const char* format, auto... args) {
  char buf[160];
  std::snprintf(buf, sizeof(buf), format, args...);
  return buf;
}

}  // namespace

std::optional<std::string> check_reply_header(const Awaited& awaited, const Header& header) {
  const auto expected = reply_size(awaited);
  if (!expected) return text("%s has no reply", to_string(awaited.request));
  if ((header.flags & kVersionMask) != kVersion)
    return text("a reply of version %u, not 1 (flags 0x%x)", header.flags & kVersionMask, header.flags);
  if (!(header.flags & kFlagReply)) return text("a message without the reply flag (flags 0x%x)", header.flags);
  if (header.request != static_cast<uint32_t>(awaited.request))
    return text("the reply to request %u, not to %s (%u)", header.request, to_string(awaited.request),
                static_cast<unsigned>(awaited.request));
  if (header.size != *expected)
    return text("a %s reply of %u bytes, not %u", to_string(awaited.request), header.size, *expected);
  return std::nullopt;
}

std::optional<std::string> check_reply_payload(const Awaited& awaited, std::span<const uint8_t> payload) {
  const auto expected = reply_size(awaited);
  if (!expected || payload.size() != *expected)
    return text("a %s payload of %zu bytes, not %u", to_string(awaited.request), payload.size(),
                expected.value_or(0));
  if (awaited.ack) return std::nullopt;
  if (awaited.request == Request::kGetVringBase) {
    VringState state;
    std::memcpy(&state, payload.data(), sizeof(state));
    if (state.index != awaited.index)
      return text("GET_VRING_BASE answered for vring %u, not %u", state.index, awaited.index);
  } else if (awaited.request == Request::kGetConfig) {
    ConfigHeader config;
    std::memcpy(&config, payload.data(), sizeof(config));
    if (config.offset != awaited.config_offset || config.size != awaited.config_size)
      return text("GET_CONFIG answered bytes %u+%u, not %u+%u", config.offset, config.size, awaited.config_offset,
                  awaited.config_size);
  }
  return std::nullopt;
}

}  // namespace kvmmio::vhost::user
