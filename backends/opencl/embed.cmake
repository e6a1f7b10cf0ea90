# SPDX-License-Identifier: Apache-2.0
# Build step: the OpenCL program source = glm_math.h with glm_math_impl.h inlined (the single copy of the math,
# prepended as inline C: docs/design.md, "One copy of the math"; PoCL 3.1 has no C++ for OpenCL) followed by kernels.cl, written as a C++
# raw string into OUT.
file(READ "${MATH}" math)
file(READ "${MATH_IMPL}" impl)
file(READ "${KERNELS}" kernels)
string(REPLACE "#include \"glm_math_impl.h\"" "${impl}" math "${math}")
set(src "${math}\n#line 1 \"kernels.cl\"\n${kernels}")
file(WRITE "${OUT}.tmp" "// Generated from glm_math.h, glm_math_impl.h and kernels.cl by embed.cmake: do not edit.\n#pragma once\nnamespace hetglm::opencl_src {\ninline constexpr const char* kProgram = R\"HETGLMCL(${src})HETGLMCL\";\n}\n")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
