{
  "targets": [
    {
      "target_name": "zkprover",
      "sources": [
        "native/src/addon.cpp",
        "native/src/arena.cpp",
        "native/src/curve.cpp",
        "native/src/fft.cpp",
        "native/src/fft_avx512.cpp",
        "native/src/formats.cpp",
        "native/src/key_file.cpp",
        "native/src/msm_avx512.cpp",
        "native/src/pairing.cpp",
        "native/src/prover.cpp",
        "native/src/setup.cpp",
        "native/src/test_ops.cpp",
        "native/src/thread_pool.cpp",
        "native/src/verifier.cpp"
      ],
      "include_dirs": ["<!(node -p \"require('node-addon-api').include_dir\")"],
      "defines": ["NAPI_VERSION=8", "NAPI_CPP_EXCEPTIONS", "NODE_ADDON_API_DISABLE_DEPRECATED"],
      "cflags!": ["-fno-exceptions", "-O2", "-O1", "-Os"],
      "cflags_cc!": ["-fno-exceptions", "-fno-rtti", "-O2", "-O1", "-Os", "-std=gnu++17", "-std=gnu++20"],
      "cflags_cc": ["-std=c++17", "-O3", "-fexceptions", "-funroll-loops", "-Wall", "-Wno-unused-function"],
      "ldflags": ["-pthread"],
      "xcode_settings": {
        "GCC_ENABLE_CPP_EXCEPTIONS": "YES",
        "CLANG_CXX_LANGUAGE_STANDARD": "c++17",
        "OTHER_CPLUSPLUSFLAGS": ["-O3"]
      }
    }
  ]
}
