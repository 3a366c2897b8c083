# strip-comments.awk FILE...: the files' text without /* */ comments (the check scripts'
# reading of C headers and version scripts: check-exports.sh, check-man.sh, check-abi.sh)
{ s = s $0 "\n" }
END {
	out = ""
	while ((i = index(s, "/*")) > 0) {
		out = out substr(s, 1, i - 1)
		s = substr(s, i + 2)
		j = index(s, "*/")
		if (j == 0) { s = ""; break }
		s = substr(s, j + 2)
	}
	printf "%s%s", out, s
}
