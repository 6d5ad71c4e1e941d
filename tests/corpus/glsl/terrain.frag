#version 450
in vec2 f_uv;
in float f_lod;
in float f_height;
layout(binding = 2) uniform sampler2D grass;
layout(location = 0) out vec4 color;
void main() {
    color = texture(grass, f_uv * 16.0) * (0.5 + 0.5 * f_height) + vec4(f_lod / 64.0, 0.0, 0.0, 0.0);
}
