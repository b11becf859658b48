// HttpServer in-process, where the test controls the process's descriptor limit: accept errors from
// descriptor exhaustion back off instead of spinning, and accepting resumes once descriptors are free.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <thread>
#include <vector>

#include "http/server.h"

namespace hsns::http {
namespace {

using namespace std::chrono_literals;

bool connect_socket(int fd, int port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
}

int new_socket() {
  return ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
}

// The highest descriptor in use + 1: a limit at this value leaves no descriptor free.
rlim_t descriptors_in_use() {
  rlim_t highest = 0;
  for (int fd = 0; fd < 65536; ++fd) {
    if (::fcntl(fd, F_GETFD) != -1) highest = static_cast<rlim_t>(fd) + 1;
  }
  return highest;
}

TEST(HttpServer, AcceptBacksOffWhileDescriptorsAreExhaustedAndResumesAfter) {
  rlimit original{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &original), 0);
  boost::asio::io_context ioc;
  std::atomic<int> descriptor_errors{0};
  ServerObserver observer;
  observer.accept_error = [&](const char* kind) {
    if (std::string_view(kind) == "descriptors") ++descriptor_errors;
  };
  HttpServer server(
      ioc, nullptr, ServerLimits{},
      [](Request&& req, Respond respond) {
        Response res{bhttp::status::ok, req.version()};
        res.prepare_payload();
        respond(std::move(res));
      },
      observer);
  server.listen({boost::asio::ip::make_address("127.0.0.1"), 0});
  const int port = server.local_endpoint().port();

  // The I/O thread starts first: creating a thread (and sanitizer bookkeeping) needs descriptors too.
  auto work = boost::asio::make_work_guard(ioc);
  std::thread io([&] { ioc.run(); });
  server.start();
  // One connection served before the exhaustion warms UBSan's dynamic-type cache: a cache miss makes
  // it open a pipe, which without a free descriptor it reports as an invalid object.
  {
    const int fd = new_socket();
    ASSERT_TRUE(connect_socket(fd, port));
    const std::string request = "GET / HTTP/1.1\r\nHost: a\r\n\r\n";
    ASSERT_EQ(::send(fd, request.data(), request.size(), 0), static_cast<ssize_t>(request.size()));
    char buf[256];
    ASSERT_GT(::recv(fd, buf, sizeof buf, 0), 0);
    ::close(fd);
    while (server.open_connections() > 0) std::this_thread::sleep_for(5ms);
  }

  // The clients' sockets exist before the exhaustion; they connect after it and wait in the kernel's
  // backlog until accepted.
  std::vector<int> clients;
  for (int i = 0; i < 8; ++i) clients.push_back(new_socket());
  // No descriptor left: every accept fails with EMFILE. (The cap was fixed at listen(), so this is the
  // path a process reaches when something else took its descriptors.)
  {
    const rlimit none{descriptors_in_use(), original.rlim_max};
    ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &none), 0);
    // Fill every free number below the limit, so accept has nothing.
    std::vector<int> fillers;
    for (int fd; (fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0;) fillers.push_back(fd);
    for (const int fd : clients) ASSERT_TRUE(connect_socket(fd, port));
    std::this_thread::sleep_for(1500ms);
    // Back-off doubling from 10 ms to 1 s makes at most about ten attempts in 1.5 s; a spinning loop
    // makes hundreds of thousands.
    EXPECT_GE(descriptor_errors.load(), 1) << "accept never hit the descriptor limit";
    EXPECT_LE(descriptor_errors.load(), 20) << "accept spins on EMFILE";
    EXPECT_EQ(server.open_connections(), 0u);
    for (const int fd : fillers) ::close(fd);
    ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &original), 0);
  }
  // Descriptors are free again: the waiting connections are taken within the longest back-off.
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (server.open_connections() < clients.size() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_EQ(server.open_connections(), clients.size());
  for (const int fd : clients) ::close(fd);
  server.shutdown([&] { ioc.stop(); });
  work.reset();
  io.join();
}

}  // namespace
}  // namespace hsns::http
