#version 450
#extension GL_ARB_gpu_shader_int64 : require
// 64-bit values through every path import has for them: attributes, a uniform
// block, arithmetic, conversions, matrices, int64 shifts and flat varyings.
layout(location=0) in vec4 pos;
layout(location=1) in dvec3 normal;
layout(binding=0, std140) uniform U { dmat3 m; double scale; int64_t bias; } u;
layout(location=0) flat out dvec3 n;
layout(location=2) flat out int64_t tag;
layout(location=3) out vec2 uv;
void main() {
  gl_Position = pos;
  n = normalize(u.m * normal) * u.scale;
  tag = (int64_t(gl_VertexIndex) << 33) + u.bias;
  uv = pos.xy;
}
