// Unit tests of outfile.c: what an output path names (new, regular, symlink, FIFO, device,
// descriptor, directory), the checks made before any work (inputs, collisions, directories)
// and how each kind is written. Character devices are only classified here (the real /dev/null,
// which nothing here opens); writing one in place is tested on a node of its own in
// tests/integration/test-outputs.sh.
#include <catch2/catch.hpp>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <noisetool/outfile.h>

#include "tempdir.h"

namespace {

std::string real(const std::string &path)
{
	char buf[PATH_MAX];
	REQUIRE(realpath(path.c_str(), buf) != nullptr);
	return buf;
}

// The entries of a directory that look like our temporary files.
int temporaries(const std::string &dir)
{
	std::string cmd = "ls -A '" + dir + "' | grep -c '\\.tmp\\.'";
	FILE *p = popen(cmd.c_str(), "r");
	int n = 0;
	if (p) {
		if (fscanf(p, "%d", &n) != 1)
			n = -1;
		pclose(p);
	}
	return n;
}

bool is_symlink(const std::string &path)
{
	struct stat st;
	return lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode);
}

} // namespace

TEST_CASE("nt_outfile_resolve classifies a path without touching it", "[outfile]")
{
	tempdir dir;
	REQUIRE(!dir.path().empty());
	struct nt_outfile_target t;
	char why[NT_OUTFILE_WHY_MAX] = "";

	SECTION("a new name: created in its directory, made absolute")
	{
		REQUIRE(nt_outfile_resolve((dir / "new.json").c_str(), &t, why, sizeof why) == 0);
		CHECK(t.kind == NT_OUTFILE_NEW);
		CHECK(t.path == real(dir.path()) + "/new.json");
		CHECK(!t.exists);
		CHECK(access((dir / "new.json").c_str(), F_OK) != 0);
	}

	SECTION("a regular file: replaced, its permission bits kept")
	{
		spit(dir / "f", "old\n");
		chmod((dir / "f").c_str(), 0600);
		REQUIRE(nt_outfile_resolve((dir / "f").c_str(), &t, why, sizeof why) == 0);
		CHECK(t.kind == NT_OUTFILE_REPLACE);
		CHECK(t.mode == 0600);
		CHECK(t.is_regular);
		CHECK(slurp(dir / "f") == "old\n");
	}

	SECTION("a symlink of ours is followed to a name beside it, also a chain or dangling one")
	{
		spit(dir / "target", "x");
		REQUIRE(mkdir((dir / "sub").c_str(), 0755) == 0);
		REQUIRE(symlink("./target", (dir / "rel").c_str()) == 0);
		REQUIRE(symlink((dir / "rel").c_str(), (dir / "chain").c_str()) == 0);
		REQUIRE(symlink("sub/../chain", (dir / "round").c_str()) == 0);
		for (const char *name : { "rel", "chain", "round" }) {
			INFO(name);
			REQUIRE(nt_outfile_resolve((dir / name).c_str(), &t, why, sizeof why) == 0);
			CHECK(t.kind == NT_OUTFILE_REPLACE);
			CHECK(t.path == real(dir / "target"));
		}

		REQUIRE(symlink("not-yet", (dir / "dangling").c_str()) == 0);
		REQUIRE(nt_outfile_resolve((dir / "dangling").c_str(), &t, why, sizeof why) == 0);
		CHECK(t.kind == NT_OUTFILE_NEW);
		CHECK(t.path == real(dir.path()) + "/not-yet");
	}

	SECTION("a symlink that leads out of its directory is refused, dangling or not")
	{
		spit(dir / "target", "x");
		REQUIRE(mkdir((dir / "sub").c_str(), 0755) == 0);
		REQUIRE(symlink("../target", (dir / "sub/up").c_str()) == 0);
		REQUIRE(symlink("sub/not-yet", (dir / "down").c_str()) == 0);
		REQUIRE(symlink((dir / "target").c_str(), (dir / "sub/absolute").c_str()) == 0);
		REQUIRE(symlink("/dev/null", (dir / "to-null").c_str()) == 0); // a device elsewhere
		REQUIRE(symlink("to-null", (dir / "chain").c_str()) == 0); // its second hop leads out
		REQUIRE(symlink("/dev/stderr", (dir / "to-stderr").c_str()) == 0);
		for (const char *name : { "sub/up", "down", "sub/absolute", "chain", "to-null",
					  "to-stderr" }) {
			INFO(name);
			CHECK(nt_outfile_resolve((dir / name).c_str(), &t, why, sizeof why) == -EACCES);
			CHECK(std::string(why).find("outside its directory") != std::string::npos);
		}
		CHECK(std::string(why) ==
		      "cannot write '" + (dir / "to-stderr") + "': the symlink '" + (dir / "to-stderr") +
			      "' leads to '/dev/stderr', outside its directory '" + dir.path() +
			      "'; an output is written through a symlink only to a file beside it (name "
			      "the file itself)");
		CHECK(access((dir / "sub/not-yet").c_str(), F_OK) != 0);
	}

	SECTION("another user's symlink is refused, even to a name beside it (as root: chown -h)")
	{
		if (geteuid() != 0) {
			WARN("not root: no symlink of another user can be made here");
			return;
		}
		spit(dir / "target", "x");
		REQUIRE(symlink("target", (dir / "planted").c_str()) == 0);
		REQUIRE(symlink("not-yet", (dir / "dangling").c_str()) == 0);
		REQUIRE(lchown((dir / "planted").c_str(), 65534, (gid_t)-1) == 0);
		REQUIRE(lchown((dir / "dangling").c_str(), 65534, (gid_t)-1) == 0);
		for (const char *name : { "planted", "dangling" }) {
			INFO(name);
			CHECK(nt_outfile_resolve((dir / name).c_str(), &t, why, sizeof why) == -EACCES);
			CHECK(std::string(why) == "cannot write '" + (dir / name) + "': '" + (dir / name) +
							  "' is a symlink of uid 65534, not yours (uid 0); "
							  "an output is never written through another "
							  "user's symlink");
		}
		// Nor through nt_outfile_open: nothing created, the target as it was.
		struct nt_outfile of;
		CHECK(nt_outfile_open(&of, (dir / "dangling").c_str(), false) == -EACCES);
		CHECK(nt_outfile_open(&of, (dir / "planted").c_str(), false) == -EACCES);
		CHECK(dir.entries() == std::set<std::string>{ "target", "planted", "dangling" });
		CHECK(slurp(dir / "target") == "x");
	}

	SECTION("a symlink loop is -ELOOP")
	{
		REQUIRE(symlink("b", (dir / "a").c_str()) == 0);
		REQUIRE(symlink("a", (dir / "b").c_str()) == 0);
		CHECK(nt_outfile_resolve((dir / "a").c_str(), &t, why, sizeof why) == -ELOOP);
	}

	SECTION("a FIFO and a character device are written in place")
	{
		REQUIRE(mkfifo((dir / "fifo").c_str(), 0644) == 0);
		REQUIRE(nt_outfile_resolve((dir / "fifo").c_str(), &t, why, sizeof why) == 0);
		CHECK(t.kind == NT_OUTFILE_STREAM);
		CHECK(t.path == dir / "fifo");
		// Classification only: /dev/null is stat'ed, never opened or replaced here.
		REQUIRE(nt_outfile_resolve("/dev/null", &t, why, sizeof why) == 0);
		CHECK(t.kind == NT_OUTFILE_STREAM);
		// Through a link beside it: the node itself is what is opened (O_NOFOLLOW).
		REQUIRE(symlink("fifo", (dir / "to-fifo").c_str()) == 0);
		REQUIRE(nt_outfile_resolve((dir / "to-fifo").c_str(), &t, why, sizeof why) == 0);
		CHECK(t.kind == NT_OUTFILE_STREAM);
		CHECK(t.path == dir / "fifo");
	}

	SECTION("-, /dev/stdout and /dev/fd/N are descriptors, never names")
	{
		REQUIRE(nt_outfile_resolve("-", &t, why, sizeof why) == 0);
		CHECK(t.kind == NT_OUTFILE_FD);
		CHECK(t.fd == 1);
		REQUIRE(nt_outfile_resolve("/dev/stdout", &t, why, sizeof why) == 0);
		CHECK(t.kind == NT_OUTFILE_FD);
		CHECK(t.fd == 1);
		REQUIRE(nt_outfile_resolve("/dev/stderr", &t, why, sizeof why) == 0);
		CHECK(t.kind == NT_OUTFILE_FD);
		CHECK(t.fd == 2);

		int wfd = open((dir / "w").c_str(), O_WRONLY | O_CREAT, 0644);
		int rfd = open((dir / "w").c_str(), O_RDONLY);
		REQUIRE(wfd >= 0);
		REQUIRE(rfd >= 0);
		std::string wname = "/dev/fd/" + std::to_string(wfd);
		REQUIRE(nt_outfile_resolve(wname.c_str(), &t, why, sizeof why) == 0);
		CHECK(t.kind == NT_OUTFILE_FD);
		CHECK(t.fd == wfd);
		CHECK(t.is_regular);
		std::string rname = "/proc/self/fd/" + std::to_string(rfd);
		CHECK(nt_outfile_resolve(rname.c_str(), &t, why, sizeof why) == -EBADF);
		CHECK(std::string(why).find("not open for writing") != std::string::npos);
		close(rfd);
		CHECK(nt_outfile_resolve(rname.c_str(), &t, why, sizeof why) == -EBADF);
		close(wfd);
	}

	SECTION("a directory, a name ending in '/', a missing directory are refused")
	{
		CHECK(nt_outfile_resolve(dir.path().c_str(), &t, why, sizeof why) == -EISDIR);
		CHECK(std::string(why).find("is a directory") != std::string::npos);
		CHECK(nt_outfile_resolve((dir / "new/").c_str(), &t, why, sizeof why) == -EISDIR);
		std::string missing = dir / "no/such/x.json";
		CHECK(nt_outfile_resolve(missing.c_str(), &t, why, sizeof why) == -ENOENT);
		CHECK(std::string(why) == "cannot write '" + missing + "': directory '" +
						  dir.path() + "/no/such' does not exist");
		spit(dir / "file", "");
		CHECK(nt_outfile_resolve((dir / "file/x").c_str(), &t, why, sizeof why) == -ENOTDIR);
	}

	SECTION("bad arguments")
	{
		CHECK(nt_outfile_resolve(nullptr, &t, why, sizeof why) == -EINVAL);
		CHECK(nt_outfile_resolve("", &t, why, sizeof why) == -EINVAL);
		CHECK(nt_outfile_resolve("x", nullptr, why, sizeof why) == -EINVAL);
		CHECK(nt_outfile_resolve("x", &t, nullptr, 0) == 0); // why may be NULL
	}
}

TEST_CASE("nt_outfile_check refuses an input as output, before any work", "[outfile]")
{
	tempdir dir;
	REQUIRE(!dir.path().empty());
	char why[NT_OUTFILE_WHY_MAX] = "";
	const std::string log = dir / "job.ntlog";
	spit(log, "the log\n");
	const char *inputs[] = { "/nonexistent/input", log.c_str() };

	SECTION("the input itself, a hard link to it, a symlink to it")
	{
		REQUIRE(link(log.c_str(), (dir / "hard").c_str()) == 0);
		REQUIRE(symlink("job.ntlog", (dir / "soft").c_str()) == 0);
		for (const std::string &out : { log, dir / "hard", dir / "soft" }) {
			CHECK(nt_outfile_check(out.c_str(), inputs, 2, why, sizeof why) == -EINVAL);
			CHECK(std::string(why) == "cannot write '" + out + "': it is the input '" + log +
							  "' (the same file); name another output");
		}
		CHECK(slurp(log) == "the log\n");
	}

	SECTION("another file, a new file, no inputs: accepted, nothing created")
	{
		spit(dir / "other", "");
		CHECK(nt_outfile_check((dir / "other").c_str(), inputs, 2, why, sizeof why) == 0);
		CHECK(nt_outfile_check((dir / "new.json").c_str(), inputs, 2, why, sizeof why) == 0);
		CHECK(nt_outfile_check(log.c_str(), nullptr, 0, why, sizeof why) == 0);
		CHECK(access((dir / "new.json").c_str(), F_OK) != 0);
	}

	SECTION("stdout and stdin redirected from the input: '-' is that file too")
	{
		int saved_in = dup(0), saved_out = dup(1);
		REQUIRE(saved_in >= 0);
		REQUIRE(saved_out >= 0);
		int fd = open(log.c_str(), O_RDWR | O_APPEND);
		REQUIRE(fd >= 0);
		dup2(fd, 0);
		dup2(fd, 1);
		const char *stdin_input[] = { "-" };
		int via_stdin = nt_outfile_check((dir / "job.ntlog").c_str(), stdin_input, 1, why,
						 sizeof why);
		int via_stdout = nt_outfile_check("-", inputs, 2, why, sizeof why);
		dup2(saved_in, 0);
		dup2(saved_out, 1);
		close(saved_in);
		close(saved_out);
		close(fd);
		CHECK(via_stdin == -EINVAL);
		CHECK(via_stdout == -EINVAL);
	}

	SECTION("a FIFO or a device as input and output destroys nothing: accepted")
	{
		REQUIRE(mkfifo((dir / "fifo").c_str(), 0644) == 0);
		std::string fifo = dir / "fifo";
		const char *fifo_input[] = { fifo.c_str() };
		CHECK(nt_outfile_check(fifo.c_str(), fifo_input, 1, why, sizeof why) == 0);
	}

	SECTION("the rules of nt_outfile_resolve apply")
	{
		CHECK(nt_outfile_check(dir.path().c_str(), inputs, 2, why, sizeof why) == -EISDIR);
		CHECK(nt_outfile_check((dir / "no/x").c_str(), inputs, 2, why, sizeof why) == -ENOENT);
		CHECK(nt_outfile_check("x", nullptr, 1, why, sizeof why) == -EINVAL);
	}

	SECTION("an unwritable directory is -EACCES (as root: checked by a child as nobody)")
	{
		REQUIRE(mkdir((dir / "ro").c_str(), 0555) == 0);
		REQUIRE(chmod(dir.path().c_str(), 0755) == 0); // mkdtemp's 0700 would hide ro
		std::string out = dir / "ro/x";
		// Root may write anywhere, so the check runs in a child without privileges.
		pid_t pid = fork();
		REQUIRE(pid >= 0);
		if (pid == 0) {
			if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0))
				_exit(3);
			int rc = nt_outfile_check(out.c_str(), nullptr, 0, why, sizeof why);
			_exit(rc == -EACCES && strstr(why, "is not writable") ? 0 : 1);
		}
		int status = 0;
		REQUIRE(waitpid(pid, &status, 0) == pid);
		REQUIRE(WIFEXITED(status));
		CHECK(WEXITSTATUS(status) == 0);
		CHECK(access(out.c_str(), F_OK) != 0);
	}
}

TEST_CASE("nt_outfile_collide: two outputs renamed over one file", "[outfile]")
{
	tempdir dir;
	REQUIRE(!dir.path().empty());
	REQUIRE(symlink("x", (dir / "link-to-x").c_str()) == 0);
	REQUIRE(mkfifo((dir / "fifo").c_str(), 0644) == 0);
	CHECK(nt_outfile_collide((dir / "x").c_str(), (dir / "x").c_str()));
	CHECK(nt_outfile_collide((dir / "x").c_str(), (dir / "link-to-x").c_str()));
	CHECK(nt_outfile_collide((dir / "x").c_str(), (dir / "./x").c_str()));
	CHECK(!nt_outfile_collide((dir / "x").c_str(), (dir / "y").c_str()));
	CHECK(!nt_outfile_collide((dir / "fifo").c_str(), (dir / "fifo").c_str()));
	CHECK(!nt_outfile_collide("-", "-"));
	CHECK(!nt_outfile_collide((dir / "no/x").c_str(), (dir / "no/x").c_str()));
}

TEST_CASE("nt_outfile_open and commit write each kind by its rule", "[outfile]")
{
	tempdir dir;
	REQUIRE(!dir.path().empty());
	struct nt_outfile of;

	SECTION("a new file: a temporary name with the pid until the commit")
	{
		std::string target = dir / "out.json";
		REQUIRE(nt_outfile_open(&of, target.c_str(), false) == 0);
		CHECK(of.kind == NT_OUTFILE_NEW);
		std::string tmp = of.tmp_path;
		std::string want = real(dir.path()) + "/out.json.tmp." + std::to_string(getpid()) + ".";
		CHECK(tmp.compare(0, want.size(), want) == 0);
		fputs("new\n", of.f);
		CHECK(access(target.c_str(), F_OK) != 0);
		REQUIRE(nt_outfile_commit(&of) == 0);
		CHECK(slurp(target) == "new\n");
		CHECK(temporaries(dir.path()) == 0);
	}

	SECTION("a symlink is written through: the target gets the content, the link stays")
	{
		spit(dir / "f", "old\n");
		chmod((dir / "f").c_str(), 0640);
		REQUIRE(symlink("f", (dir / "link").c_str()) == 0);
		REQUIRE(nt_outfile_open(&of, (dir / "link").c_str(), false) == 0);
		CHECK(of.kind == NT_OUTFILE_REPLACE);
		CHECK(std::string(of.tmp_path).find("/f.tmp.") != std::string::npos);
		fputs("new\n", of.f);
		REQUIRE(nt_outfile_commit(&of) == 0);
		CHECK(is_symlink(dir / "link"));
		CHECK(slurp(dir / "f") == "new\n");
		struct stat st;
		REQUIRE(stat((dir / "f").c_str(), &st) == 0);
		CHECK((st.st_mode & 0777) == 0640);
		CHECK(temporaries(dir.path()) == 0);
	}

	SECTION("a FIFO with a reader is written in place; without one the open fails at once")
	{
		std::string fifo = dir / "fifo";
		REQUIRE(mkfifo(fifo.c_str(), 0644) == 0);
		CHECK(nt_outfile_open(&of, fifo.c_str(), false) == -ENXIO);
		CHECK(std::string(of.why).find("no process is reading the FIFO") != std::string::npos);

		int rfd = open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
		REQUIRE(rfd >= 0);
		REQUIRE(nt_outfile_open(&of, fifo.c_str(), false) == 0);
		CHECK(of.kind == NT_OUTFILE_STREAM);
		CHECK(of.tmp_path[0] == '\0');
		fputs("through the fifo\n", of.f);
		REQUIRE(nt_outfile_commit(&of) == 0);
		char buf[64] = "";
		ssize_t n = read(rfd, buf, sizeof buf - 1);
		close(rfd);
		CHECK(std::string(buf, n > 0 ? (size_t)n : 0) == "through the fifo\n");
		struct stat st;
		REQUIRE(lstat(fifo.c_str(), &st) == 0);
		CHECK(S_ISFIFO(st.st_mode));
		CHECK(temporaries(dir.path()) == 0);
	}

	SECTION("a descriptor name writes that descriptor in place, at its offset")
	{
		std::string file = dir / "fd-target";
		spit(file, "head\n");
		int fd = open(file.c_str(), O_WRONLY | O_APPEND);
		REQUIRE(fd >= 0);
		std::string name = "/dev/fd/" + std::to_string(fd);
		REQUIRE(nt_outfile_open(&of, name.c_str(), true) == 0); // nothing is overwritten
		CHECK(of.kind == NT_OUTFILE_FD);
		fputs("tail\n", of.f);
		REQUIRE(nt_outfile_commit(&of) == 0);
		CHECK(fcntl(fd, F_GETFD) >= 0); // ours stays open
		close(fd);
		CHECK(slurp(file) == "head\ntail\n");
	}

	SECTION("- is stdout's FILE")
	{
		REQUIRE(nt_outfile_open(&of, "-", false) == 0);
		CHECK(of.is_stdout);
		CHECK(of.f == stdout);
		nt_outfile_abort(&of);
	}

	SECTION("a directory is refused at the open: nothing created")
	{
		REQUIRE(mkdir((dir / "d").c_str(), 0755) == 0);
		CHECK(nt_outfile_open(&of, (dir / "d").c_str(), false) == -EISDIR);
		CHECK(std::string(of.why).find("is a directory") != std::string::npos);
		CHECK(temporaries(dir.path()) == 0);
	}

	SECTION("no_overwrite refuses a regular file, also through a symlink")
	{
		spit(dir / "keep", "keep\n");
		REQUIRE(symlink("keep", (dir / "to-keep").c_str()) == 0);
		CHECK(nt_outfile_open(&of, (dir / "to-keep").c_str(), true) == -EEXIST);
		CHECK(slurp(dir / "keep") == "keep\n");
	}

	SECTION("a write error on a device is reported at the commit")
	{
		// /dev/full is opened in place (never replaced) and every write fails with ENOSPC.
		struct stat st;
		if (stat("/dev/full", &st) != 0 || !S_ISCHR(st.st_mode)) {
			WARN("no /dev/full here");
		} else {
			REQUIRE(nt_outfile_open(&of, "/dev/full", false) == 0);
			CHECK(of.kind == NT_OUTFILE_STREAM);
			fputs("lost\n", of.f);
			CHECK(nt_outfile_commit(&of) == -ENOSPC);
			CHECK(std::string(of.why).find("writing '/dev/full' failed") != std::string::npos);
			REQUIRE(stat("/dev/full", &st) == 0);
			CHECK(S_ISCHR(st.st_mode));
		}
	}
}

TEST_CASE("nt_outfile_mkdirs creates an output directory with its parents", "[outfile]")
{
	tempdir dir;
	REQUIRE(!dir.path().empty());
	char why[NT_OUTFILE_WHY_MAX] = "";
	struct stat st;

	SECTION("missing parents are created; an existing directory is fine")
	{
		std::string deep = dir / "a/b/c";
		REQUIRE(nt_outfile_mkdirs(deep.c_str(), why, sizeof why) == 0);
		REQUIRE(stat(deep.c_str(), &st) == 0);
		CHECK(S_ISDIR(st.st_mode));
		CHECK(nt_outfile_mkdirs(deep.c_str(), why, sizeof why) == 0);
		CHECK(nt_outfile_mkdirs((dir / "a//b/c/").c_str(), why, sizeof why) == 0);
	}

	SECTION("a file in the way is -ENOTDIR, naming it")
	{
		spit(dir / "file", "");
		CHECK(nt_outfile_mkdirs((dir / "file").c_str(), why, sizeof why) == -ENOTDIR);
		CHECK(nt_outfile_mkdirs((dir / "file/sub").c_str(), why, sizeof why) == -ENOTDIR);
		CHECK(std::string(why) == "cannot create '" + (dir / "file/sub") + "': '" +
						  (dir / "file") + "': Not a directory");
	}

	SECTION("a symlink to a directory is that directory")
	{
		REQUIRE(mkdir((dir / "real").c_str(), 0755) == 0);
		REQUIRE(symlink("real", (dir / "link").c_str()) == 0);
		CHECK(nt_outfile_mkdirs((dir / "link/x").c_str(), why, sizeof why) == 0);
		CHECK(stat((dir / "real/x").c_str(), &st) == 0);
		CHECK(nt_outfile_mkdirs((dir / "link").c_str(), why, sizeof why) == 0);
	}

	SECTION("another user's symlink as the directory is refused (as root: chown -h)")
	{
		if (geteuid() != 0) {
			WARN("not root: no symlink of another user can be made here");
			return;
		}
		REQUIRE(mkdir((dir / "elsewhere").c_str(), 0755) == 0);
		REQUIRE(symlink("elsewhere", (dir / "planted").c_str()) == 0);
		REQUIRE(lchown((dir / "planted").c_str(), 65534, (gid_t)-1) == 0);
		for (const char *name : { "planted", "planted/" }) {
			INFO(name);
			CHECK(nt_outfile_mkdirs((dir / name).c_str(), why, sizeof why) == -EACCES);
			CHECK(std::string(why).find("is a symlink of uid 65534, not yours") !=
			      std::string::npos);
		}
	}

	SECTION("bad arguments")
	{
		CHECK(nt_outfile_mkdirs(nullptr, why, sizeof why) == -EINVAL);
		CHECK(nt_outfile_mkdirs("", why, sizeof why) == -EINVAL);
	}
}

// The atomic writing of a regular file: the temporary name, abort, replace, no_overwrite.
TEST_CASE("nt_outfile: a regular file is written atomically", "[outfile]")
{
	tempdir dir;
	REQUIRE(!dir.path().empty());
	const std::string target = dir.path() + "/out.json";
	struct nt_outfile of;

	SECTION("commit creates the file atomically")
	{
		REQUIRE(nt_outfile_open(&of, target.c_str(), false) == 0);
		REQUIRE(of.f != nullptr);
		CHECK(!of.is_stdout);
		fputs("hello\n", of.f);
		// Before the commit only the temporary file exists.
		auto before = dir.entries();
		REQUIRE(before.size() == 1);
		CHECK(*before.begin() != "out.json");
		CHECK(before.begin()->rfind("out.json.tmp.", 0) == 0);
		CHECK(access(target.c_str(), F_OK) != 0);

		REQUIRE(nt_outfile_commit(&of) == 0);
		CHECK(dir.entries() == std::set<std::string>{ "out.json" });
		CHECK(slurp(target) == "hello\n");
		struct stat st;
		REQUIRE(stat(target.c_str(), &st) == 0);
		CHECK((st.st_mode & 0777) == 0644);
		nt_outfile_abort(&of); // safe after commit: leaves the committed file
		CHECK(dir.entries() == std::set<std::string>{ "out.json" });
	}

	SECTION("commit replaces an existing file when overwriting is allowed")
	{
		FILE *f = fopen(target.c_str(), "w");
		REQUIRE(f != nullptr);
		fputs("old\n", f);
		fclose(f);
		REQUIRE(nt_outfile_open(&of, target.c_str(), false) == 0);
		fputs("new\n", of.f);
		REQUIRE(nt_outfile_commit(&of) == 0);
		CHECK(slurp(target) == "new\n");
		CHECK(dir.entries().size() == 1);
	}

	SECTION("abort leaves no file and no temporary file")
	{
		REQUIRE(nt_outfile_open(&of, target.c_str(), false) == 0);
		fputs("partial", of.f);
		CHECK(dir.entries().size() == 1);
		nt_outfile_abort(&of);
		CHECK(dir.entries().empty());
		nt_outfile_abort(&of); // twice is safe
		CHECK(dir.entries().empty());
	}

	SECTION("a missing directory gives -ENOENT")
	{
		std::string missing = dir.path() + "/no/such/dir/out.json";
		CHECK(nt_outfile_open(&of, missing.c_str(), false) == -ENOENT);
		CHECK(dir.entries().empty());
	}

	SECTION("no_overwrite on an existing file gives -EEXIST")
	{
		FILE *f = fopen(target.c_str(), "w");
		REQUIRE(f != nullptr);
		fputs("keep\n", f);
		fclose(f);
		CHECK(nt_outfile_open(&of, target.c_str(), true) == -EEXIST);
		CHECK(slurp(target) == "keep\n");
		CHECK(dir.entries() == std::set<std::string>{ "out.json" });
	}

	SECTION("no_overwrite: a target that appears before the commit is kept")
	{
		REQUIRE(nt_outfile_open(&of, target.c_str(), true) == 0);
		fputs("mine\n", of.f);
		FILE *f = fopen(target.c_str(), "w");
		REQUIRE(f != nullptr);
		fputs("theirs\n", f);
		fclose(f);
		CHECK(nt_outfile_commit(&of) == -EEXIST);
		CHECK(slurp(target) == "theirs\n");
		CHECK(dir.entries() == std::set<std::string>{ "out.json" });
	}

	SECTION("no_overwrite on a new file commits")
	{
		REQUIRE(nt_outfile_open(&of, target.c_str(), true) == 0);
		fputs("fresh\n", of.f);
		REQUIRE(nt_outfile_commit(&of) == 0);
		CHECK(slurp(target) == "fresh\n");
		CHECK(dir.entries() == std::set<std::string>{ "out.json" });
	}

	SECTION("bad arguments")
	{
		CHECK(nt_outfile_open(&of, "", false) == -EINVAL);
		CHECK(nt_outfile_open(nullptr, target.c_str(), false) == -EINVAL);
		CHECK(nt_outfile_open(&of, nullptr, false) == -EINVAL);
		CHECK(nt_outfile_commit(nullptr) == -EINVAL);
	}
}
