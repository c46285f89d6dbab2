// Scratch files for the unit tests of what writes files (test-outfile.cpp,
// test-atomic-file.cpp): a directory removed with its contents, a file's text read and written.
// Include after catch.hpp.
#ifndef NT_TESTS_UNIT_TEMPDIR_H
#define NT_TESTS_UNIT_TEMPDIR_H

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>

#include <dirent.h>
#include <ftw.h>
#include <sys/stat.h>

// A mkdtemp directory, removed with everything in it at the end.
class tempdir {
public:
	tempdir()
	{
		char tmpl[] = "/tmp/nt-unit-XXXXXX";
		if (mkdtemp(tmpl))
			path_ = tmpl;
	}
	~tempdir()
	{
		if (!path_.empty())
			nftw(path_.c_str(), remove_one, 16, FTW_DEPTH | FTW_PHYS);
	}
	tempdir(const tempdir &) = delete;
	tempdir &operator=(const tempdir &) = delete;
	std::string operator/(const std::string &name) const { return path_ + "/" + name; }
	const std::string &path() const { return path_; }
	// The names in the directory.
	std::set<std::string> entries() const
	{
		std::set<std::string> out;
		DIR *d = opendir(path_.c_str());
		if (!d)
			return out;
		while (struct dirent *e = readdir(d))
			if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0)
				out.insert(e->d_name);
		closedir(d);
		return out;
	}

private:
	static int remove_one(const char *p, const struct stat *, int, struct FTW *)
	{
		remove(p);
		return 0;
	}
	std::string path_;
};

// The whole text of the file at path ("" when it cannot be read).
inline std::string slurp(const std::string &path)
{
	std::string s;
	FILE *f = fopen(path.c_str(), "r");
	if (!f)
		return s;
	char buf[4096];
	size_t n;
	while ((n = fread(buf, 1, sizeof buf, f)) > 0)
		s.append(buf, n);
	fclose(f);
	return s;
}

// A file at path holding text.
inline void spit(const std::string &path, const std::string &text)
{
	FILE *f = fopen(path.c_str(), "w");
	REQUIRE(f != nullptr);
	fputs(text.c_str(), f);
	fclose(f);
}

#endif // NT_TESTS_UNIT_TEMPDIR_H
