#pragma once
// Readiness of the many sockets of one thread, watched through one epoll set of their own that the
// thread's io_context watches in turn. Boost.Asio 1.74 re-arms a descriptor with epoll_ctl at every
// async_wait: one more system call per datagram for simulated peers that receive one datagram at a
// time (5 % of a swarm thread at 1,000 peers). Here the re-arming is once per batch of ready sockets.
#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>

namespace ncast::swarm {

class Readable {
 public:
  // Called on the io_context's thread while the socket has datagrams (level-triggered: a socket left
  // with some is reported again).
  virtual void on_readable() = 0;

 protected:
  ~Readable() = default;
};

class ReadySet {
 public:
  explicit ReadySet(boost::asio::io_context& io);
  ReadySet(const ReadySet&) = delete;
  ReadySet& operator=(const ReadySet&) = delete;

  // target must stay alive until remove(fd) or until fd is closed.
  void add(int fd, Readable& target);
  void remove(int fd);
  // No more call-backs; the io_context no longer waits for the set (call on its thread).
  void close();

 private:
  void arm();

  boost::asio::posix::stream_descriptor watch_;  // owns the epoll set
  bool closed_ = false;
};

}  // namespace ncast::swarm
