#version 450
in vec4 v_color;
in vec2 v_uv;
layout(binding = 0) uniform sampler2D font;
layout(location = 0) out vec4 color;
void main() { color = v_color * texture(font, v_uv).r; }
