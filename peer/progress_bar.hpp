#pragma once
// ncast-peer --progress: one line on standard error, redrawn at most five times a second, with the
// segments written of those known ("+" while the stream may still grow) and the rate so far.
#include <string>
#include <utility>

#include "peer/stream_receiver.hpp"

namespace ncast::peer {

class ProgressBar {
 public:
  ProgressBar(std::string stream, const StreamReceiver& receiver) : stream_(std::move(stream)), receiver_(receiver) {}

  // Redraws the line when it is due; started: when the run began.
  void update(TimePoint now, TimePoint started);
  // Ends the line.
  static void finish();

 private:
  std::string stream_;
  const StreamReceiver& receiver_;
  TimePoint last_{};
};

}  // namespace ncast::peer
