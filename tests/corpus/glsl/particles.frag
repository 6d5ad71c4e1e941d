#version 450
in vec4 f_color;
in vec2 f_uv;
layout(binding = 1) uniform sampler2D sprite;
layout(location = 0) out vec4 color;
void main() { color = f_color * texture(sprite, f_uv); }
