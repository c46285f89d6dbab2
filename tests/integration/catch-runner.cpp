// Catch2 runner for the integration tests: the test puts itself in its own process group so
// that a stray load generator can always be reached, then runs the session.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <unistd.h>

int main(int argc, char **argv)
{
	setpgid(0, 0);
	return Catch::Session().run(argc, argv);
}
