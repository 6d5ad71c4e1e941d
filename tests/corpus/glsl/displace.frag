#version 450
in vec2 f_uv;
in vec3 f_normal;
layout(binding = 3) uniform sampler2D base;
layout(location = 0) out vec4 color;
void main() { color = texture(base, f_uv) * max(f_normal.y, 0.2); }
