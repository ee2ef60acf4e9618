a.cu: \
  /tmp/TestBuildFlagErrors2687763406/001/k.cu \
  /tmp/go-build3558887470/b001/bamgen.test
