/*
 * noleak_cc: a C++ program that frees everything it allocates, but uses the parts of the
 * C and C++ runtimes that keep memory for the life of the process (iostream and stdio
 * buffers, libstdc++'s emergency exception pool, a thread's TLS, a thrown exception), so
 * the leak report's built-in suppressions are checked against a real runtime.
 * usage: noleak_cc   (prints "ok N" on stdout)
 */
#include <cstdio>
#include <iostream>
#include <map>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

static std::string work(int n)
{
    std::map<int, std::string> m;
    for (int i = 0; i < n; i++)
        m[i] = std::string(40 + i % 13, 'x');
    std::string all;
    for (auto &kv : m)
        all += kv.second.substr(0, 1);
    return all;
}

int main()
{
    std::vector<std::string> v;
    for (int i = 0; i < 100; i++)
        v.push_back(work(50));
    try {
        throw std::runtime_error(std::string(100, 'e'));
    } catch (const std::exception &e) {
        v.push_back(e.what());
    }
    std::thread t([] { (void)work(20); });
    t.join();
    std::cout << "ok " << v.size() << std::endl;
    printf("stdio too\n");
    return 0;
}
